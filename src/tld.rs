//! TLD names: the one place that decides what a well-formed name is and what its
//! canonical form looks like.
//!
//! The canonical form is what the snapshot stores and what responses are keyed by:
//! lowercase, no leading dot, internationalised labels in their `xn--` (Punycode)
//! form. The same function serves the price source reader, the feed importers and the
//! HTTP parameter parser, so a name that one of them accepts the others accept too.
//!
//! ```
//! use tldsnap::tld::normalize;
//! assert_eq!(normalize(" .COM ").unwrap(), "com");
//! assert_eq!(normalize("co.uk").unwrap(), "co.uk");
//! assert_eq!(normalize("닷컴").unwrap(), "xn--mk1bu44c");
//! assert!(normalize("a..b").is_err());
//! ```

use std::borrow::Cow;
use std::fmt;

/// Longest DNS name in presentation form without the trailing dot (RFC 1035 2.3.4).
pub const MAX_NAME_LEN: usize = 253;
/// Longest DNS label (RFC 1035 2.3.4).
pub const MAX_LABEL_LEN: usize = 63;

/// Why a string is not a well-formed TLD name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TldError {
    /// Nothing left after trimming and dropping the leading dot.
    Empty,
    /// Longer than [`MAX_NAME_LEN`] bytes in `xn--` form.
    TooLong,
    /// Two dots in a row, or a trailing dot.
    EmptyLabel,
    /// A label longer than [`MAX_LABEL_LEN`].
    LabelTooLong,
    /// A label that starts or ends with `-`.
    Hyphen,
    /// A character that may not appear in a host name (control characters, NUL,
    /// spaces, punctuation, ...).
    BadChar(char),
    /// A Unicode name that IDNA (UTS 46) refuses to map.
    Idna,
}

impl fmt::Display for TldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TldError::Empty => f.write_str("empty name"),
            TldError::TooLong => write!(f, "name longer than {MAX_NAME_LEN} characters"),
            TldError::EmptyLabel => {
                f.write_str("empty label (two dots in a row or a trailing dot)")
            }
            TldError::LabelTooLong => write!(f, "label longer than {MAX_LABEL_LEN} characters"),
            TldError::Hyphen => f.write_str("label starts or ends with '-'"),
            TldError::BadChar(c) => write!(f, "character {c:?} is not allowed in a domain name"),
            TldError::Idna => f.write_str("not a valid internationalised name"),
        }
    }
}

impl std::error::Error for TldError {}

/// The 22 TLDs that every plan may query (the free plan's TLDs). `co.uk` is not `uk`.
pub const FREE_TLDS: [&str; 22] = [
    "com", "net", "org", "co", "io", "ai", "me", "info", "us", "tech", "dev", "biz", "so",
    "online", "site", "store", "shop", "app", "blog", "xyz", "uk", "de",
];

/// Whether `tld` (canonical form: lowercase, no leading dot) is one of the 22 free TLDs.
pub fn is_free(tld: &str) -> bool {
    FREE_TLDS.contains(&tld)
}

/// Turns user or feed input into the canonical TLD form.
///
/// Trims ASCII white space, drops one leading dot, lowercases, and converts Unicode
/// labels to `xn--` form. Borrows when the input is already canonical, which is the
/// common case on the request path.
pub fn normalize(input: &str) -> Result<Cow<'_, str>, TldError> {
    if is_canonical(input.as_bytes()) {
        return Ok(Cow::Borrowed(input));
    }
    normalize_slow(input)
}

/// Whether `name` is already in canonical form, checked in one pass over its bytes:
/// labels of 1 to [`MAX_LABEL_LEN`] lowercase letters, digits and inner hyphens,
/// joined by single dots, at most [`MAX_NAME_LEN`] bytes. Exactly the ASCII names
/// that [`normalize`] would hand back unchanged (a test checks the two agree).
fn is_canonical(name: &[u8]) -> bool {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return false;
    }
    let mut label_len = 0;
    let mut prev = b'.';
    for &b in name {
        match b {
            b'a'..=b'z' | b'0'..=b'9' => label_len += 1,
            b'-' if label_len > 0 => label_len += 1,
            b'.' if label_len > 0 && prev != b'-' => label_len = 0,
            _ => return false,
        }
        if label_len > MAX_LABEL_LEN {
            return false;
        }
        prev = b;
    }
    label_len > 0 && prev != b'-'
}

/// Everything [`normalize`] does for a name that is not canonical already.
fn normalize_slow(input: &str) -> Result<Cow<'_, str>, TldError> {
    let trimmed = input.trim_matches(|c: char| c == ' ' || c == '\t');
    let name = trimmed.strip_prefix('.').unwrap_or(trimmed);
    if name.is_empty() {
        return Err(TldError::Empty);
    }
    if name.is_ascii() {
        if let Some(bad) = name.bytes().find(|b| !is_name_byte(*b)) {
            return Err(TldError::BadChar(bad as char));
        }
        let name: Cow<'_, str> = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        check_labels(&name)?;
        return Ok(name);
    }
    if let Some(bad) = name.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Err(TldError::BadChar(bad));
    }
    let ascii = idna::domain_to_ascii(name).map_err(|_| TldError::Idna)?;
    if let Some(bad) = ascii.bytes().find(|b| !is_name_byte(*b)) {
        return Err(TldError::BadChar(bad as char));
    }
    check_labels(&ascii)?;
    Ok(Cow::Owned(ascii))
}

/// Letters, digits, hyphen and the label separator: the LDH rule of RFC 952/1123.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'.'
}

fn check_labels(name: &str) -> Result<(), TldError> {
    if name.len() > MAX_NAME_LEN {
        return Err(TldError::TooLong);
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(TldError::EmptyLabel);
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(TldError::LabelTooLong);
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(TldError::Hyphen);
        }
    }
    Ok(())
}

/// The last label of a canonical name: `uk` for `co.uk`.
pub fn last_label(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's sentence (shared/spec/domain-price-api.md, section 5 item 2), as it
    /// stands: the list is checked name by name against it, in its order.
    const SPEC_FREE_TLDS: &str = "These 22 TLDs are available on every plan, including \
        Free: com, net, org, co, io, ai, me, info, us, tech, dev, biz, so, online, site, \
        store, shop, app, blog, xyz, uk, de. All other TLDs (ccTLDs, new gTLDs and premium \
        extensions, 3,428 TLDs in total) require a paid plan.";

    #[test]
    fn the_free_tlds_are_the_specs_22_names() {
        let list = SPEC_FREE_TLDS
            .split_once("including Free: ")
            .and_then(|(_, rest)| rest.split_once(". "))
            .map(|(list, _)| list)
            .unwrap();
        let spec: Vec<&str> = list.split(", ").collect();
        assert_eq!(spec.len(), 22);
        assert_eq!(FREE_TLDS.as_slice(), spec.as_slice());
        for name in spec {
            assert!(is_free(name), "{name}");
            assert_eq!(normalize(name).as_deref(), Ok(name), "{name} is canonical");
        }
        for other in ["co.uk", "COM", ".com", "fr", "museum", "ukk", "d"] {
            assert!(!is_free(other), "{other}");
        }
    }

    #[test]
    fn canonical_names_borrow() {
        assert!(matches!(normalize("com"), Ok(Cow::Borrowed("com"))));
        assert!(matches!(normalize("co.uk"), Ok(Cow::Borrowed("co.uk"))));
        assert!(matches!(
            normalize("xn--p1ai"),
            Ok(Cow::Borrowed("xn--p1ai"))
        ));
    }

    #[test]
    fn trims_lowercases_and_drops_one_leading_dot() {
        assert_eq!(normalize("  .COM\t").unwrap(), "com");
        assert_eq!(normalize("Co.Uk").unwrap(), "co.uk");
        assert_eq!(normalize("..com"), Err(TldError::EmptyLabel));
    }

    #[test]
    fn unicode_becomes_punycode() {
        assert_eq!(normalize("рф").unwrap(), "xn--p1ai");
        assert_eq!(normalize("닷컴").unwrap(), "xn--mk1bu44c");
        assert_eq!(normalize("РФ").unwrap(), "xn--p1ai");
        assert_eq!(normalize("みんな").unwrap(), "xn--q9jyb4c");
    }

    #[test]
    fn refuses_malformed_names() {
        assert_eq!(normalize(""), Err(TldError::Empty));
        assert_eq!(normalize("."), Err(TldError::Empty));
        assert_eq!(normalize("a..b"), Err(TldError::EmptyLabel));
        assert_eq!(normalize("com."), Err(TldError::EmptyLabel));
        assert_eq!(normalize("-com"), Err(TldError::Hyphen));
        assert_eq!(normalize("com-"), Err(TldError::Hyphen));
        assert_eq!(normalize("c\0m"), Err(TldError::BadChar('\0')));
        assert_eq!(normalize("c\u{7}m"), Err(TldError::BadChar('\u{7}')));
        assert_eq!(normalize("c m"), Err(TldError::BadChar(' ')));
        assert_eq!(normalize("c/m"), Err(TldError::BadChar('/')));
        assert_eq!(normalize("ко\u{0}м"), Err(TldError::BadChar('\0')));
        assert_eq!(normalize(&"a".repeat(64)), Err(TldError::LabelTooLong));
        assert_eq!(normalize(&"a.".repeat(130)[..259]), Err(TldError::TooLong));
    }

    #[test]
    fn the_fast_path_agrees_with_the_full_rules() {
        // Every string of up to 4 bytes over an alphabet that hits each rule, plus
        // long labels and names around the length limits.
        let alphabet = ["a", "z", "0", "-", ".", "A", " ", "_", "é"];
        let mut inputs = vec![String::new()];
        let mut level = vec![String::new()];
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            inputs.extend(level.iter().cloned());
        }
        for n in [62, 63, 64] {
            inputs.push("a".repeat(n));
            inputs.push(format!("b.{}", "a".repeat(n)));
        }
        for n in [251, 252, 253, 254] {
            let mut name = "abc.".repeat(64);
            name.truncate(n);
            inputs.push(name.trim_end_matches('.').to_owned());
            inputs.push(name);
        }
        let mut fast = 0;
        for input in &inputs {
            let slow = normalize_slow(input);
            if is_canonical(input.as_bytes()) {
                fast += 1;
                assert!(
                    matches!(&slow, Ok(Cow::Borrowed(s)) if s == input),
                    "{input:?} passed the fast path but the full rules give {slow:?}"
                );
            } else {
                assert!(
                    !matches!(&slow, Ok(Cow::Borrowed(s)) if s == input),
                    "{input:?} is canonical but missed the fast path"
                );
            }
            assert_eq!(normalize(input), slow, "{input:?}");
        }
        assert!(fast > 200, "only {fast} canonical inputs were tried");
    }

    #[test]
    fn last_label_of_second_level_suffix() {
        assert_eq!(last_label("co.uk"), "uk");
        assert_eq!(last_label("com"), "com");
    }
}
