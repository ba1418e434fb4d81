//! Full domain names: normalised with the TLD rules of [`crate::tld`] and split into the
//! registrable name and its public suffix with the Public Suffix List.
//!
//! The list is the copy shipped in `snapshots/tlds/`, embedded at compile time and
//! parsed once into a [`Names`] (≈10 ms) when the server or the CLI starts; a request
//! only walks a small trie per name.
//!
//! # Which suffix
//!
//! The suffix is the longest match of the PSL's ICANN section (`shop.example.co.uk` is
//! `example.co.uk` under `co.uk`; `foo.github.io` is `github.io` under `io`), with one
//! exception: a suffix of the PRIVATE section that tldsnap itself prices (`us.com`,
//! `br.com`, `uk.net`: registrars sell names under them exactly like TLDs, see
//! `docs/IMPORT.md`) wins over the shorter ICANN one, because that is the suffix the
//! owner of `example.us.com` pays for. Private suffixes tldsnap does not price
//! (`github.io`) never count.

use publicsuffix::{IcannList, List, Psl, Type};

use crate::tld::{self, TldError};

/// The Public Suffix List shipped with the data (`snapshots/tlds/public_suffix_list.dat`).
pub const PSL_TEXT: &str = include_str!("../../snapshots/tlds/public_suffix_list.dat");

/// Longest input looked at: a name whose `xn--` form fits in 253 bytes is at most
/// 4 bytes per character of Unicode; anything longer is refused before IDNA runs.
const MAX_INPUT_BYTES: usize = 4 * tld::MAX_NAME_LEN;

/// Why a string is not a domain name tldsnap can audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Not a well-formed name under the TLD rules of [`crate::tld`].
    Malformed(TldError),
    /// A public suffix alone (`co.uk`, `com`): there is no name to own under it.
    SuffixOnly,
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameError::Malformed(e) => e.fmt(f),
            NameError::SuffixOnly => {
                f.write_str("a public suffix alone, not a domain name (e.g. example.com)")
            }
        }
    }
}

impl std::error::Error for NameError {}

/// A domain name split at its public suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The registrable domain in canonical form (`example.co.uk`, `xn--bcher-kva.de`).
    pub domain: String,
    /// Where the suffix starts in `domain` (`domain[suffix_at..]` is `co.uk`).
    pub suffix_at: usize,
    /// Whether the suffix is one of the PRIVATE section that tldsnap prices (`us.com`):
    /// its names are registered with the company that runs it, not with the TLD's
    /// registry.
    pub private: bool,
}

impl Split {
    /// The registrable name's own label (`example`).
    pub fn label(&self) -> &str {
        &self.domain[..self.suffix_at - 1]
    }

    /// The public suffix (`co.uk`).
    pub fn suffix(&self) -> &str {
        &self.domain[self.suffix_at..]
    }
}

/// The Public Suffix List, parsed once: the ICANN section alone and the whole list.
pub struct Names {
    icann: IcannList,
    all: List,
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names").finish_non_exhaustive()
    }
}

impl Names {
    /// The list shipped in the binary (`snapshots/tlds/public_suffix_list.dat`).
    pub fn embedded() -> Names {
        Names::from_psl(PSL_TEXT).expect("the shipped list parses")
    }

    /// Parses a Public Suffix List.
    pub fn from_psl(psl: &str) -> Result<Names, String> {
        let all: List = psl
            .parse()
            .map_err(|e| format!("public suffix list: {e:?}"))?;
        let icann = IcannList::from(all.clone());
        Ok(Names { icann, all })
    }

    /// Normalises `input` (trim, lowercase, one trailing dot dropped, Unicode to `xn--`:
    /// the rules of [`tld::normalize`]) and splits it at its public suffix (see the
    /// module docs). `priced(suffix)` says whether tldsnap prices a suffix, which decides
    /// whether a PRIVATE-section suffix counts.
    pub fn split(&self, input: &str, priced: impl Fn(&str) -> bool) -> Result<Split, NameError> {
        let name = canonical(input)?;
        let bytes = name.as_bytes();
        // One walk of the whole list: its longest match is the ICANN section's too,
        // unless it is a PRIVATE-section suffix, which counts only when it has a price
        // (else the ICANN section is walked alone).
        let (len, typ) = self
            .all
            .suffix(bytes)
            .map_or((0, None), |s| (s.as_bytes().len(), s.typ()));
        let private_priced = typ == Some(Type::Private) && priced(&name[name.len() - len..]);
        let suffix_len = if typ == Some(Type::Private) && !private_priced {
            self.icann.suffix(bytes).map_or(0, |s| s.as_bytes().len())
        } else {
            len
        };
        if suffix_len == 0 || suffix_len >= name.len() {
            return Err(NameError::SuffixOnly);
        }
        let suffix_at = name.len() - suffix_len;
        let label_start = name[..suffix_at - 1].rfind('.').map_or(0, |i| i + 1);
        let domain = if label_start == 0 {
            name
        } else {
            name[label_start..].to_string()
        };
        Ok(Split {
            suffix_at: suffix_at - label_start,
            domain,
            private: private_priced,
        })
    }
}

/// The canonical form of a full domain name: [`tld::normalize`] after trimming and
/// dropping one trailing dot (the root), refusing overlong input before IDNA sees it.
pub fn canonical(input: &str) -> Result<String, NameError> {
    let trimmed = input.trim_matches(|c: char| c == ' ' || c == '\t');
    if trimmed.len() > MAX_INPUT_BYTES {
        return Err(NameError::Malformed(TldError::TooLong));
    }
    let name = trimmed.strip_suffix('.').unwrap_or(trimmed);
    tld::normalize(name)
        .map(|n| n.into_owned())
        .map_err(NameError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    fn names() -> &'static Names {
        static N: OnceLock<Names> = OnceLock::new();
        N.get_or_init(Names::embedded)
    }

    fn split(s: &str) -> Result<(String, String), NameError> {
        let priced = |s: &str| matches!(s, "us.com" | "com" | "co.uk");
        names()
            .split(s, priced)
            .map(|sp| (sp.domain.clone(), sp.suffix().to_string()))
    }

    fn ok(domain: &str, suffix: &str) -> Result<(String, String), NameError> {
        Ok((domain.to_string(), suffix.to_string()))
    }

    #[test]
    fn splits_at_the_icann_suffix() {
        assert_eq!(split("shop.example.co.uk"), ok("example.co.uk", "co.uk"));
        assert_eq!(split("example.com"), ok("example.com", "com"));
        assert_eq!(split("foo.github.io"), ok("github.io", "io"));
        assert_eq!(
            split("a.b.c.example.com.au"),
            ok("example.com.au", "com.au")
        );
        // Wildcard and exception rules (*.ck, !www.ck).
        assert_eq!(split("x.example.co.ck"), ok("example.co.ck", "co.ck"));
        assert_eq!(split("www.ck"), ok("www.ck", "ck"));
        // Unknown TLDs fall back to the last label (the PSL's implicit "*" rule).
        assert_eq!(split("foo.bar.nope"), ok("bar.nope", "nope"));
    }

    #[test]
    fn a_priced_private_suffix_wins() {
        assert_eq!(split("example.us.com"), ok("example.us.com", "us.com"));
        let priced = |s: &str| matches!(s, "us.com" | "com");
        assert!(names().split("example.us.com", priced).unwrap().private);
        assert!(!names().split("example.com", priced).unwrap().private);
        assert!(!names().split("foo.github.io", priced).unwrap().private);
        // br.com is private too, but not priced in this test's `priced`.
        assert_eq!(split("example.br.com"), ok("br.com", "com"));
    }

    #[test]
    fn normalises_like_tld_names() {
        assert_eq!(split("  WWW.Example.COM. "), ok("example.com", "com"));
        assert_eq!(split("bücher.de"), ok("xn--bcher-kva.de", "de"));
        assert_eq!(split("пример.рф"), ok("xn--e1afmkfd.xn--p1ai", "xn--p1ai"));
        // An IDN second-level suffix of the ICANN section.
        assert_eq!(
            split("例子.公司.cn"),
            ok("xn--fsqu00a.xn--55qx5d.cn", "xn--55qx5d.cn")
        );
    }

    #[test]
    fn refuses_what_is_not_a_domain() {
        let malformed = |s: &str| matches!(split(s), Err(NameError::Malformed(_)));
        assert!(malformed(""));
        assert!(malformed("a..b.com"));
        assert!(malformed("exa mple.com"));
        assert!(malformed("ex\0ample.com"));
        assert!(malformed("-example.com"));
        assert!(malformed("example.com.."));
        assert!(malformed(&"a".repeat(100_000)));
        assert!(malformed(&format!("{}.com", "é".repeat(100_000))));
        assert!(malformed(&format!("{}.com", "a".repeat(64))));
        assert_eq!(split("com"), Err(NameError::SuffixOnly));
        assert_eq!(split("co.uk."), Err(NameError::SuffixOnly));
        assert_eq!(split("nope"), Err(NameError::SuffixOnly));
    }
}
