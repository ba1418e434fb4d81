//! Query and path parameters: percent-decoding and the rules for `tlds`,
//! `limit`, `registrars` and `include_prices` (docs/API.md, "Parameters").
//!
//! Decoding borrows from the request whenever the text has no escapes, which is the
//! common case, and never panics: a bad escape (`%zz`, a lone `%`) or bytes that do not
//! decode to UTF-8 (`%ff`) are a 400 `invalid_parameter` naming the parameter.
//!
//! Rules that the specification leaves open and this module settles (also in `docs/API.md`):
//! - `+` in the query means a space (HTML form encoding); names are trimmed anyway.
//! - Only the parameters an endpoint takes are looked at. Any other parameter is
//!   ignored, even when it is repeated or badly encoded.
//! - A parameter an endpoint takes that appears twice is 400 `invalid_parameter`.
//! - A parameter given with an empty value (`tlds=`) is treated as absent for `tlds`
//!   (400 `missing_parameter`) and is 400 `invalid_parameter` for the others, whose
//!   absence has a meaning (a default) that an empty value should not silently pick.
//! - An empty item inside a list (`tlds=com,,net`) is a malformed name: 400.

mod endpoints;

use std::borrow::Cow;

use smallvec::SmallVec;

use super::problem::{Problem, echo};
use crate::query::{self, CatalogueSort, Cursor};
use crate::tld;

pub use endpoints::{
    AuditParams, CatalogueParams, CheapestParams, DnsParams, EventsParams, ExportParams,
    FreshnessParams, HistoryParams, LookupParams, OverviewParams, PricesParams, RegistrarParams,
    RegistrarsParams, SearchParams, Values, values_of,
};

/// The values of a list parameter (`tlds`, `registrars`): up to 8 are kept inline, so
/// the usual request allocates no list.
pub type List<'a> = SmallVec<[Cow<'a, str>; 8]>;

/// Most distinct values `tlds` and `registrars` take.
pub const MAX_LIST_VALUES: usize = 100;
/// `limit` when it is absent.
pub const DEFAULT_LIMIT: usize = 10;
/// Largest `limit`.
pub const MAX_LIMIT: usize = 100;

/// Why percent-decoding failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// A `%` not followed by two hexadecimal digits.
    BadEscape,
    /// The decoded bytes are not UTF-8.
    NotUtf8,
}

impl DecodeError {
    fn reason(self) -> &'static str {
        match self {
            DecodeError::BadEscape => "a '%' must be followed by two hexadecimal digits",
            DecodeError::NotUtf8 => "the percent-decoded bytes are not valid UTF-8",
        }
    }
}

/// Why a parameter given twice is refused, in that parameter's own terms: a list
/// parameter takes its values comma-separated in one occurrence, a single-valued one
/// takes one value.
pub fn repeated_reason(param: &str) -> &'static str {
    if LIST_PARAMETERS.contains(&param) {
        "given more than once; give it once, with its values separated by commas"
    } else {
        "given more than once; it takes a single value"
    }
}

/// The query parameters that take comma-separated lists.
pub const LIST_PARAMETERS: &[&str] = &["tlds", "registrars", "types"];

/// Percent-decodes `raw` (RFC 3986). With `plus_is_space`, `+` becomes a space, as in
/// HTML form encoding. Borrows when there is nothing to decode.
pub fn percent_decode(raw: &str, plus_is_space: bool) -> Result<Cow<'_, str>, DecodeError> {
    let bytes = raw.as_bytes();
    if !bytes
        .iter()
        .any(|&b| b == b'%' || (plus_is_space && b == b'+'))
    {
        return Ok(Cow::Borrowed(raw));
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hi = bytes.get(i + 1).and_then(|b| hex(*b));
                let lo = bytes.get(i + 2).and_then(|b| hex(*b));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                    _ => return Err(DecodeError::BadEscape),
                }
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| DecodeError::NotUtf8)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Picks the parameters named in `names` out of a raw query string (the part after
/// `?`, undecoded), decoded, in the order of `names`. Absent parameters are `None`.
///
/// Errors: a wanted parameter given twice, or a wanted parameter whose value does not
/// decode. Everything else in the query is ignored.
pub fn pick<'a, const N: usize>(
    raw: Option<&'a str>,
    names: [&'static str; N],
) -> Result<[Option<Cow<'a, str>>; N], Problem> {
    let mut found: [Option<Cow<'a, str>>; N] = std::array::from_fn(|_| None);
    let Some(raw) = raw else {
        return Ok(found);
    };
    // One pass over the bytes finds each pair's end, its `=` and whether name or value
    // hold an escape (`&`, `=`, `%` and `+` are ASCII, so every cut is a char
    // boundary). Names and values without escapes are compared and borrowed as they are.
    let bytes = raw.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = start;
        let mut eq = None;
        let (mut name_escaped, mut value_escaped) = (false, false);
        while end < bytes.len() {
            match bytes[end] {
                b'&' => break,
                b'=' if eq.is_none() => eq = Some(end),
                b'%' | b'+' if eq.is_none() => name_escaped = true,
                b'%' | b'+' => value_escaped = true,
                _ => {}
            }
            end += 1;
        }
        let (raw_name, raw_value) = match eq {
            Some(eq) => (&raw[start..eq], &raw[eq + 1..end]),
            None => (&raw[start..end], ""),
        };
        start = end + 1;
        if raw_name.is_empty() && eq.is_none() {
            continue;
        }
        let slot = if name_escaped {
            // A name that does not decode is not one of ours: ignore it like any
            // unknown one.
            let Ok(name) = percent_decode(raw_name, true) else {
                continue;
            };
            names.iter().position(|n| *n == name)
        } else {
            names.iter().position(|n| *n == raw_name)
        };
        let Some(slot) = slot else {
            continue;
        };
        let param = names[slot];
        if found[slot].is_some() {
            return Err(Problem::InvalidParameter {
                name: param,
                value: None,
                reason: repeated_reason(param).to_owned(),
            });
        }
        let value = if value_escaped {
            percent_decode(raw_value, true).map_err(|err| Problem::InvalidParameter {
                name: param,
                value: Some(echo(raw_value)),
                reason: err.reason().to_owned(),
            })?
        } else {
            Cow::Borrowed(raw_value)
        };
        found[slot] = Some(value);
    }
    Ok(found)
}

/// The `tlds` parameter: 1 to 100 canonical names, duplicates collapsed
/// keeping the first, in request order.
pub fn tlds(value: Option<&str>) -> Result<List<'_>, Problem> {
    const NAME: &str = "tlds";
    let value = match value {
        Some(v) if !v.trim_matches([' ', '\t']).is_empty() => v,
        _ => return Err(Problem::MissingParameter { name: NAME }),
    };
    let mut out = List::new();
    for item in split_commas(value) {
        let name = tld::normalize(item).map_err(|err| Problem::InvalidParameter {
            name: NAME,
            value: Some(echo(item)),
            reason: format!("{:?} is not a well-formed TLD: {err}", echo(item)),
        })?;
        push_distinct(&mut out, name, NAME)?;
    }
    Ok(out)
}

/// Adds `item` to the values of list parameter `name` unless it is there already (the
/// first one is kept); past [`MAX_LIST_VALUES`] distinct values, 400 `too_many_values`.
fn push_distinct<'a>(
    out: &mut List<'a>,
    item: Cow<'a, str>,
    name: &'static str,
) -> Result<(), Problem> {
    if out.contains(&item) {
        return Ok(());
    }
    if out.len() == MAX_LIST_VALUES {
        return Err(Problem::TooManyValues {
            name,
            max: MAX_LIST_VALUES,
        });
    }
    out.push(item);
    Ok(())
}

/// The items of a comma-separated list, empty ones included (`str::split(',')`, by a
/// plain byte scan: lists here are short, and the generic char searcher costs more
/// than the scan).
fn split_commas(list: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(list);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.bytes().position(|b| b == b',') {
            Some(i) => {
                rest = Some(&current[i + 1..]);
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// The `limit` parameter: an integer from 1 to 100, 10 when absent.
pub fn limit(value: Option<&str>) -> Result<usize, Problem> {
    bounded_int("limit", value, DEFAULT_LIMIT, MAX_LIMIT)
}

/// The staleness rule of a request at `now_ms`: `max_age_days` (1 to
/// [`crate::query::MAX_AGE_DAYS_LIMIT`], default `default_days`) and `include_stale`
/// (`true` or `false`, default `false`).
pub fn freshness(
    max_age_days: Option<&str>,
    include_stale: Option<&str>,
    default_days: u32,
    now_ms: i64,
) -> Result<crate::query::Freshness, Problem> {
    let days = bounded_int(
        "max_age_days",
        max_age_days,
        default_days as usize,
        crate::query::MAX_AGE_DAYS_LIMIT as usize,
    )?;
    let include = boolean("include_stale", include_stale, false)?;
    Ok(crate::query::Freshness::new(now_ms, days as u32, include))
}

/// A day parameter (`from`, `to`, `at`): `YYYY-MM-DD`, a real calendar day (UTC);
/// `None` when absent. Returns days since 1970-01-01.
pub fn day(name: &'static str, value: Option<&str>) -> Result<Option<i64>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    crate::time::parse_date(value)
        .map(Some)
        .ok_or_else(|| Problem::InvalidParameter {
            name,
            value: Some(echo(value)),
            reason: "must be a calendar day written YYYY-MM-DD (UTC)".to_owned(),
        })
}

/// The `from` and `to` days of a history window; `from` after `to` is a 400 naming
/// `from`.
pub fn window(from: Option<&str>, to: Option<&str>) -> Result<(Option<i64>, Option<i64>), Problem> {
    let (f, t) = (day("from", from)?, day("to", to)?);
    if let (Some(f), Some(t)) = (f, t)
        && f > t
    {
        return Err(Problem::InvalidParameter {
            name: "from",
            value: from.map(echo),
            reason: format!(
                "the window starts after it ends (to is {}); give from <= to",
                crate::time::date_string(t)
            ),
        });
    }
    Ok((f, t))
}

/// The `limit` of a page (catalogue, a registrar's price list): an integer from 1 to
/// [`query::MAX_PAGE`], [`query::DEFAULT_PAGE`] when absent.
pub fn page_limit(value: Option<&str>) -> Result<usize, Problem> {
    bounded_int("limit", value, query::DEFAULT_PAGE, query::MAX_PAGE)
}

/// The `sort` of the catalogue: `name` (default), `cheapest` or `registrars`.
pub fn sort(value: Option<&str>) -> Result<CatalogueSort, Problem> {
    let Some(value) = value else {
        return Ok(CatalogueSort::Name);
    };
    CatalogueSort::parse(value).ok_or_else(|| Problem::InvalidParameter {
        name: "sort",
        value: Some(echo(value)),
        reason: "must be name, cheapest or registrars".to_owned(),
    })
}

/// The `sort` of the cheapest rankings: `register` (the default), `renew`,
/// `total_3_year` or `total_5_year`.
pub fn ranking(value: Option<&str>) -> Result<query::Ranking, Problem> {
    let Some(value) = value else {
        return Ok(query::Ranking::Register);
    };
    query::Ranking::from_name(value).ok_or_else(|| Problem::InvalidParameter {
        name: "sort",
        value: Some(echo(value)),
        reason: "must be register, renew, total_3_year or total_5_year".to_owned(),
    })
}

/// The `currency` of an answer: an ISO 4217 code (three letters, any case), returned
/// in capitals; whether the snapshot has a rate for it is the query's to say. `None`
/// when absent (USD).
pub fn currency(value: Option<&str>) -> Result<Option<String>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    if value.len() == 3 && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Ok(Some(value.to_ascii_uppercase()));
    }
    Err(Problem::InvalidParameter {
        name: "currency",
        value: Some(echo(value)),
        reason: "must be an ISO 4217 currency code such as EUR, GBP or JPY".to_owned(),
    })
}

/// The `type` filter of the catalogue: one of the IANA root zone types.
pub fn tld_type(value: Option<&str>) -> Result<Option<&str>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    if query::TYPES.contains(&value) {
        return Ok(Some(value));
    }
    Err(Problem::InvalidParameter {
        name: "type",
        value: Some(echo(value)),
        reason: format!("must be one of {}", query::TYPES.join(", ")),
    })
}

/// The `types` of the DNS lookup: comma-separated record types (`A`, `AAAA`, `MX`,
/// `NS`, `TXT`, `CAA`, `SOA`; any letter case, blanks around each trimmed), duplicates
/// collapsed keeping the first; absent: all of them. Empty, an empty item or another
/// type is a 400.
pub fn dns_types(value: Option<&str>) -> Result<Vec<crate::live::dns::Type>, Problem> {
    use crate::live::dns::Type;
    let Some(value) = value else {
        return Ok(Type::ALL.to_vec());
    };
    let mut types = Vec::with_capacity(Type::ALL.len());
    for item in split_commas(value) {
        let Some(t) = Type::parse(item) else {
            let all: Vec<&str> = Type::ALL.iter().map(|t| t.as_str()).collect();
            return Err(Problem::InvalidParameter {
                name: "types",
                value: Some(echo(value)),
                reason: format!(
                    "{:?} is not a record type tldsnap looks up; the types are {} (comma-separated)",
                    echo(item),
                    all.join(", ")
                ),
            });
        };
        if !types.contains(&t) {
            types.push(t);
        }
    }
    Ok(types)
}

/// Longest `q`, in characters (a TLD name has at most 63 per label and 253 in all).
const MAX_Q_CHARS: usize = 253;

/// The `q` filter of the catalogue: a piece of a TLD name, in Unicode or `xn--` form.
/// Trimmed, a leading dot dropped, lowercased. Its ASCII characters must be letters,
/// digits, `-` or `.`; any other character is taken (a piece that no name contains
/// matches nothing), which is a rule the OpenAPI document can state exactly.
pub fn search(value: Option<&str>) -> Result<Option<String>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    let bad = |reason: &str| Problem::InvalidParameter {
        name: "q",
        value: Some(echo(value)),
        reason: reason.to_owned(),
    };
    let q = value.trim_matches([' ', '\t']);
    let q = q.strip_prefix('.').unwrap_or(q);
    if q.is_empty() {
        return Err(bad(
            "empty; leave it out for every TLD, or give a piece of a name",
        ));
    }
    if q.chars().count() > MAX_Q_CHARS {
        return Err(bad("longer than a TLD name can be (253 characters)"));
    }
    if !q
        .chars()
        .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || c == '-' || c == '.')
    {
        return Err(bad(
            "a TLD name holds no ASCII characters but letters, digits, '-' and '.'",
        ));
    }
    Ok(Some(q.to_lowercase()))
}

/// The `cursor` of a page: the opaque `next_cursor` of the previous page.
pub fn cursor(value: Option<&str>) -> Result<Option<Cursor>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    Cursor::decode(value)
        .map(Some)
        .map_err(|_| Problem::InvalidParameter {
            name: "cursor",
            value: Some(echo(value)),
            reason: "not a cursor of this API; pass the next_cursor of the previous page as it is"
                .to_owned(),
        })
}

/// The `{key}` path segment of a registrar: percent-decoded and lowercased, of the
/// documented form.
pub fn path_registrar(raw: &str) -> Result<Cow<'_, str>, Problem> {
    let decoded = percent_decode(raw, false).map_err(|err| Problem::InvalidParameter {
        name: "key",
        value: Some(echo(raw)),
        reason: err.reason().to_owned(),
    })?;
    if !is_registrar_key(&decoded) {
        return Err(Problem::InvalidParameter {
            name: "key",
            value: Some(echo(&decoded)),
            reason: "not a registrar key (1 to 64 of a-z, 0-9, '_' and '-', starting with a \
                     letter or digit)"
                .to_owned(),
        });
    }
    Ok(match decoded {
        Cow::Borrowed(s) if !s.bytes().any(|b| b.is_ascii_uppercase()) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_ascii_lowercase()),
    })
}

/// An integer from 1 to `max`, `default` when absent: plain decimal digits only (no
/// sign, spaces or exponent).
fn bounded_int(
    name: &'static str,
    value: Option<&str>,
    default: usize,
    max: usize,
) -> Result<usize, Problem> {
    let Some(value) = value else {
        return Ok(default);
    };
    let bad = || Problem::InvalidParameter {
        name,
        value: Some(echo(value)),
        reason: format!("must be an integer from 1 to {max}"),
    };
    // At most six digits after leading zeros: no overflow is possible.
    let digits = value.trim_start_matches('0');
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 6 {
        return Err(bad());
    }
    let n = digits
        .bytes()
        .fold(0usize, |n, b| n * 10 + usize::from(b - b'0'));
    if (1..=max).contains(&n) {
        Ok(n)
    } else {
        Err(bad())
    }
}

/// The `registrars` parameter of `prices`: `None` when absent (every registrar), else 1
/// to 100 keys, trimmed and lowercased, duplicates collapsed keeping the first. A key
/// that is not of the documented form `[a-z0-9][a-z0-9_-]{0,63}` is a 400; a well-formed
/// key that the snapshot does not know is left to the query (`not_found`).
pub fn registrars(value: Option<&str>) -> Result<Option<List<'_>>, Problem> {
    const NAME: &str = "registrars";
    let Some(value) = value else {
        return Ok(None);
    };
    if value.trim_matches([' ', '\t']).is_empty() {
        return Err(Problem::InvalidParameter {
            name: NAME,
            value: Some(String::new()),
            reason: "empty; leave it out for every registrar, or give 1 to 100 keys".to_owned(),
        });
    }
    let mut out = List::new();
    for item in split_commas(value) {
        let key = item.trim_matches([' ', '\t']);
        if !is_registrar_key(key) {
            return Err(Problem::InvalidParameter {
                name: NAME,
                value: Some(echo(item)),
                reason: format!(
                    "{:?} is not a registrar key (1 to 64 of a-z, 0-9, '_' and '-', starting \
                     with a letter or digit)",
                    echo(item)
                ),
            });
        }
        let key: Cow<'_, str> = if key.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(key.to_ascii_lowercase())
        } else {
            Cow::Borrowed(key)
        };
        push_distinct(&mut out, key, NAME)?;
    }
    Ok(Some(out))
}

/// Whether `key` is a registrar key in any letter case: `[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}`
/// (the source's check, [`crate::source::registrar_key_shape`]).
pub fn is_registrar_key(key: &str) -> bool {
    crate::source::registrar_key_shape(key, true)
}

/// A whole-number parameter in `min..=max`: plain decimal digits (no sign, spaces or
/// exponent); `default` when absent.
pub fn integer(
    name: &'static str,
    value: Option<&str>,
    min: u64,
    max: u64,
    default: u64,
) -> Result<u64, Problem> {
    let Some(value) = value else {
        return Ok(default);
    };
    // `u64::from_str` would also take a leading '+': digits only, checked first. Too
    // many digits fail to parse, like any other value out of range.
    let n = (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
        .then(|| value.parse::<u64>().ok())
        .flatten()
        .filter(|n| (min..=max).contains(n));
    n.ok_or_else(|| Problem::InvalidParameter {
        name,
        value: Some(echo(value)),
        reason: format!("must be an integer from {min} to {max}"),
    })
}

/// A boolean parameter: exactly `true` or `false`; `default` when absent.
pub fn boolean(name: &'static str, value: Option<&str>, default: bool) -> Result<bool, Problem> {
    match value {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(Problem::InvalidParameter {
            name,
            value: Some(echo(other)),
            reason: "must be true or false".to_owned(),
        }),
    }
}

/// The `{tld}` path segment of the registrar listing: percent-decoded (a `+` stays a
/// `+`, as RFC 3986 has it for paths) and turned into its canonical form.
pub fn path_tld(raw: &str) -> Result<Cow<'_, str>, Problem> {
    let decoded = percent_decode(raw, false).map_err(|err| Problem::InvalidParameter {
        name: "tld",
        value: Some(echo(raw)),
        reason: err.reason().to_owned(),
    })?;
    let bad = |err: tld::TldError, shown: &str| Problem::InvalidParameter {
        name: "tld",
        value: Some(echo(shown)),
        reason: format!("{:?} is not a well-formed TLD: {err}", echo(shown)),
    };
    match decoded {
        Cow::Borrowed(s) => tld::normalize(s).map_err(|e| bad(e, s)),
        Cow::Owned(s) => match tld::normalize(&s) {
            Ok(name) => Ok(Cow::Owned(name.into_owned())),
            Err(e) => Err(bad(e, &s)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_parameter_is_refused_in_its_own_terms() {
        let reason = |q: &str| match pick(Some(q), ["tlds", "limit"]) {
            Err(Problem::InvalidParameter { reason, .. }) => reason,
            other => panic!("{q}: {other:?}"),
        };
        assert!(reason("limit=1&limit=2").contains("takes a single value"));
        assert!(!reason("limit=1&limit=2").contains("comma"));
        assert!(reason("tlds=com&tlds=net").contains("separated by commas"));
    }

    fn code(p: Problem) -> &'static str {
        p.code()
    }

    #[test]
    fn dns_types_are_a_list_of_known_types() {
        use crate::live::dns::Type;
        assert_eq!(dns_types(None).unwrap(), Type::ALL);
        assert_eq!(dns_types(Some("mx, A,MX")).unwrap(), [Type::Mx, Type::A]);
        for bad in ["", "A,", ",", "PTR", "A,,MX", "ANY"] {
            assert_eq!(
                code(dns_types(Some(bad)).unwrap_err()),
                "invalid_parameter",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn split_commas_is_split_on_comma() {
        for list in [
            "",
            ",",
            "a",
            "a,",
            ",a",
            "a,,b",
            "com,net,org",
            "é,ü,",
            ",,,",
        ] {
            assert_eq!(
                split_commas(list).collect::<Vec<_>>(),
                list.split(',').collect::<Vec<_>>(),
                "{list:?}"
            );
        }
    }

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("com", true).unwrap(), "com");
        assert!(matches!(
            percent_decode("com", true).unwrap(),
            Cow::Borrowed(_)
        ));
        assert_eq!(percent_decode("%D1%80%D1%84", true).unwrap(), "рф");
        assert_eq!(percent_decode("a+b", true).unwrap(), "a b");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
        assert_eq!(percent_decode("%ff", true), Err(DecodeError::NotUtf8));
        assert_eq!(percent_decode("%", true), Err(DecodeError::BadEscape));
        assert_eq!(percent_decode("%4", true), Err(DecodeError::BadEscape));
        assert_eq!(percent_decode("%zz", true), Err(DecodeError::BadEscape));
        assert_eq!(percent_decode("%00", true).unwrap(), "\0");
    }

    #[test]
    fn pick_finds_wanted_parameters_and_ignores_the_rest() {
        let [t, l] = pick(Some("x=1&tlds=com&&y&limit=5&x=2&%ff=3"), ["tlds", "limit"]).unwrap();
        assert_eq!(t.as_deref(), Some("com"));
        assert_eq!(l.as_deref(), Some("5"));
        let [t] = pick(None, ["tlds"]).unwrap();
        assert!(t.is_none());
        let [t] = pick(Some("tlds"), ["tlds"]).unwrap();
        assert_eq!(t.as_deref(), Some(""));
        // Encoded names count as the parameter they decode to.
        let [t] = pick(Some("%74lds=io"), ["tlds"]).unwrap();
        assert_eq!(t.as_deref(), Some("io"));
        // Values: `+` is a space, escapes decode, a second `=` belongs to the value,
        // an empty name or pair is skipped, a trailing `&` ends nothing.
        let [t, l] = pick(Some("=x&tlds=a+b%2Cc&limit=1=2&"), ["tlds", "limit"]).unwrap();
        assert_eq!(t.as_deref(), Some("a b,c"));
        assert_eq!(l.as_deref(), Some("1=2"));
        let [t] = pick(Some("tl%64s=x&&&"), ["tlds"]).unwrap();
        assert_eq!(t.as_deref(), Some("x"));
        assert!(matches!(
            pick(Some("tlds=com"), ["tlds"]).unwrap(),
            [Some(Cow::Borrowed("com"))]
        ));
    }

    #[test]
    fn pick_refuses_repeats_and_bad_encoding() {
        assert_eq!(
            code(pick(Some("tlds=a&tlds=b"), ["tlds"]).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(
            code(pick(Some("tlds=%ff"), ["tlds"]).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(
            code(pick(Some("tlds=%"), ["tlds"]).unwrap_err()),
            "invalid_parameter"
        );
        // Unknown parameters may repeat or be mis-encoded.
        assert!(pick(Some("a=%ff&a=1&tlds=com"), ["tlds"]).is_ok());
    }

    #[test]
    fn tld_lists() {
        let v = tlds(Some(" .COM,net,com,рф,co.uk")).unwrap();
        assert_eq!(v.as_slice(), ["com", "net", "xn--p1ai", "co.uk"]);
        assert_eq!(code(tlds(None).unwrap_err()), "missing_parameter");
        assert_eq!(code(tlds(Some("")).unwrap_err()), "missing_parameter");
        assert_eq!(
            code(tlds(Some("com,,net")).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(code(tlds(Some("a..b")).unwrap_err()), "invalid_parameter");
        assert_eq!(code(tlds(Some("co\0m")).unwrap_err()), "invalid_parameter");
        let hundred: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        assert_eq!(tlds(Some(&hundred.join(","))).unwrap().len(), 100);
        let with_dups = format!("{},t0,t5", hundred.join(","));
        assert_eq!(tlds(Some(&with_dups)).unwrap().len(), 100);
        let too_many = format!("{},t100", hundred.join(","));
        assert_eq!(code(tlds(Some(&too_many)).unwrap_err()), "too_many_values");
    }

    #[test]
    fn limits() {
        assert_eq!(limit(None).unwrap(), 10);
        assert_eq!(limit(Some("1")).unwrap(), 1);
        assert_eq!(limit(Some("100")).unwrap(), 100);
        assert_eq!(limit(Some("007")).unwrap(), 7);
        for bad in [
            "0",
            "101",
            "-1",
            "+5",
            "abc",
            "",
            " 5",
            "5.0",
            "1e2",
            "99999999999999999999999",
        ] {
            assert_eq!(
                code(limit(Some(bad)).unwrap_err()),
                "invalid_parameter",
                "{bad}"
            );
        }
    }

    #[test]
    fn registrar_lists() {
        assert_eq!(registrars(None).unwrap(), None);
        assert_eq!(
            registrars(Some("Alpha, beta,alpha"))
                .unwrap()
                .unwrap()
                .as_slice(),
            ["alpha", "beta"]
        );
        assert_eq!(code(registrars(Some("")).unwrap_err()), "invalid_parameter");
        assert_eq!(
            code(registrars(Some("a,,b")).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(
            code(registrars(Some("-x")).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(
            code(registrars(Some("a b")).unwrap_err()),
            "invalid_parameter"
        );
        let many: Vec<String> = (0..101).map(|i| format!("r{i}")).collect();
        assert_eq!(
            code(registrars(Some(&many.join(","))).unwrap_err()),
            "too_many_values"
        );
    }

    #[test]
    fn booleans_and_path() {
        assert!(!boolean("include_prices", None, false).unwrap());
        assert!(boolean("include_prices", Some("true"), false).unwrap());
        assert_eq!(
            code(boolean("include_prices", Some("TRUE"), false).unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(path_tld("COM").unwrap(), "com");
        assert_eq!(path_tld("%D1%80%D1%84").unwrap(), "xn--p1ai");
        assert_eq!(code(path_tld("%ff").unwrap_err()), "invalid_parameter");
        assert_eq!(code(path_tld("a..b").unwrap_err()), "invalid_parameter");
        assert_eq!(code(path_tld("..").unwrap_err()), "invalid_parameter");
    }

    #[test]
    fn days_windows_and_pages() {
        assert_eq!(day("at", None).unwrap(), None);
        assert_eq!(day("at", Some("1970-01-02")).unwrap(), Some(1));
        for bad in [
            "2026-02-30",
            "2026-1-01",
            "20260101",
            "2026-01-01T00:00:00Z",
            "",
            "x",
        ] {
            let p = day("at", Some(bad)).unwrap_err();
            assert!(
                matches!(p, Problem::InvalidParameter { name: "at", .. }),
                "{bad}"
            );
        }
        assert_eq!(
            window(Some("2025-01-01"), Some("2025-01-01")).unwrap(),
            (Some(20089), Some(20089))
        );
        let p = window(Some("2025-02-01"), Some("2025-01-01")).unwrap_err();
        assert!(matches!(p, Problem::InvalidParameter { name: "from", .. }));
        let p = window(Some("2025-01-01"), Some("2025-13-01")).unwrap_err();
        assert!(matches!(p, Problem::InvalidParameter { name: "to", .. }));
        assert_eq!(page_limit(None).unwrap(), 100);
        assert_eq!(page_limit(Some("500")).unwrap(), 500);
        for bad in ["0", "501", "-1", "1e3", "9999999999"] {
            assert_eq!(
                code(page_limit(Some(bad)).unwrap_err()),
                "invalid_parameter"
            );
        }
        assert_eq!(sort(None).unwrap(), CatalogueSort::Name);
        assert_eq!(sort(Some("cheapest")).unwrap(), CatalogueSort::Cheapest);
        assert!(matches!(
            sort(Some("price")).unwrap_err(),
            Problem::InvalidParameter { name: "sort", .. }
        ));
        assert_eq!(
            tld_type(Some("country-code")).unwrap(),
            Some("country-code")
        );
        assert!(matches!(
            tld_type(Some("cc")).unwrap_err(),
            Problem::InvalidParameter { name: "type", .. }
        ));
        assert_eq!(search(Some(" .РФ")).unwrap().as_deref(), Some("рф"));
        assert_eq!(search(Some("xn--P1")).unwrap().as_deref(), Some("xn--p1"));
        for bad in ["", " ", ".", "a b", "co/uk", "%"] {
            assert!(
                matches!(
                    search(Some(bad)).unwrap_err(),
                    Problem::InvalidParameter { name: "q", .. }
                ),
                "{bad:?}"
            );
        }
        let c = Cursor {
            snapshot: 0x0123_4567_89ab_cdef,
            listing: 7,
            position: 300,
        };
        let mut text = Vec::new();
        c.encode(&mut text);
        let text = String::from_utf8(text).unwrap();
        assert_eq!(cursor(Some(&text)).unwrap(), Some(c));
        for bad in [
            "",
            "c1",
            "x",
            &text[1..],
            &text.to_uppercase(),
            &format!("{text}0"),
        ] {
            assert!(
                matches!(
                    cursor(Some(bad)).unwrap_err(),
                    Problem::InvalidParameter { name: "cursor", .. }
                ),
                "{bad:?}"
            );
        }
        assert_eq!(path_registrar("DynaDot").unwrap(), "dynadot");
        assert_eq!(
            code(path_registrar("a%20b").unwrap_err()),
            "invalid_parameter"
        );
        assert_eq!(
            code(path_registrar("%ff").unwrap_err()),
            "invalid_parameter"
        );
    }
}
