//! Full domain names: normalised with the TLD rules of [`crate::tld`] and split into the
//! registrable name and its public suffix with the Public Suffix List.
//!
//! The list is the copy shipped in `snapshots/tlds/`, embedded at compile time and
//! parsed once into a [`Names`] (≈10 ms) when the server or the CLI starts; a request
//! only walks a small trie per name. The trie is the `publicsuffix` crate's, walked the
//! same way, but held as one map from each node's path to the rule ending there: ~0.6 MB
//! where the crate's two lists (every rule; the ICANN section) held 3.4 MB resident for
//! the whole life of the server. A test compares every answer with the
//! crate's.
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

use std::collections::HashMap;

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

/// The Public Suffix List, parsed once.
pub struct Names {
    rules: Rules,
}

/// The rules of a Public Suffix List as a trie of labels, the trie of the `publicsuffix`
/// crate (with its `punycode` feature: each IDN rule also in `xn--` form): every node
/// is keyed by its path (`jp`, `kawasaki.jp`, `*.kawasaki.jp`), so one map holds the
/// whole trie, and a child is found by looking up `label.parent`.
struct Rules {
    /// Each node, with the rule that ends there (a node may only lead to longer rules).
    nodes: HashMap<Box<[u8]>, Option<Leaf>, ahash::RandomState>,
}

/// A rule of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leaf {
    /// `!rule`: an exception to a wildcard.
    exception: bool,
    /// Of the PRIVATE section (else the ICANN one).
    private: bool,
}

impl Rules {
    /// Parses the list as `publicsuffix::List::from_str` does.
    fn parse(text: &str) -> Result<Rules, String> {
        let mut rules = Rules {
            nodes: HashMap::default(),
        };
        let mut section = None;
        for line in text.lines() {
            if line.contains("BEGIN ICANN DOMAINS") {
                section = Some(false);
                continue;
            }
            if line.contains("BEGIN PRIVATE DOMAINS") {
                section = Some(true);
                continue;
            }
            if line.starts_with("//") {
                continue;
            }
            let (Some(private), Some(rule)) = (section, line.split_whitespace().next()) else {
                continue;
            };
            rules.append(rule, private)?;
            let ascii = idna::domain_to_ascii(rule)
                .map_err(|_| format!("public suffix list: invalid rule {rule:?}"))?;
            rules.append(&ascii, private)?;
        }
        if rules.nodes.is_empty() {
            return Err("public suffix list: no rules".to_owned());
        }
        rules.nodes.shrink_to_fit();
        Ok(rules)
    }

    fn append(&mut self, rule: &str, private: bool) -> Result<(), String> {
        let (rule, exception) = match rule.strip_prefix('!') {
            Some(_) if !rule.contains('.') => {
                return Err(format!(
                    "public suffix list: an exception at the first label: {rule:?}"
                ));
            }
            Some(rest) => (rest, true),
            None => (rule, false),
        };
        // Every node from the last label: each a suffix of the rule.
        let mut end = rule.len();
        for label in rule.rsplit('.') {
            if label.is_empty() {
                return Err(format!("public suffix list: an empty label in {rule:?}"));
            }
            let start = end - label.len();
            let path = &rule.as_bytes()[start..];
            if !self.nodes.contains_key(path) {
                self.nodes.insert(path.into(), None);
            }
            end = start.saturating_sub(1);
        }
        self.nodes
            .insert(rule.as_bytes().into(), Some(Leaf { exception, private }));
        Ok(())
    }

    /// The length of `name`'s public suffix and whether it is a PRIVATE-section one
    /// (`None` when none matched): `publicsuffix::Psl::suffix` of the whole list, or with
    /// `icann_only` of the crate's `IcannList`, whose walk takes no PRIVATE rule past
    /// the first label.
    fn suffix(&self, name: &[u8], icann_only: bool) -> (usize, Option<bool>) {
        let mut labels = name.rsplit(|b| *b == b'.');
        let fqdn = name.ends_with(b".");
        if fqdn {
            labels.next();
        }
        let Some(first) = labels.next() else {
            return (0, None);
        };
        // The path of the node reached, written right to left at the end of `buf`: a
        // wildcard ("*") may stand for an empty label, so it may be longer than `name`.
        let mut stack = [0u8; 512];
        let mut heap = Vec::new();
        let need = 2 * name.len() + 2;
        let buf: &mut [u8] = if need <= stack.len() {
            &mut stack[..need]
        } else {
            heap.resize(need, 0);
            &mut heap
        };
        let mut pos = need - first.len();
        buf[pos..].copy_from_slice(first);
        let mut len = first.len();
        // The first label is a suffix even when no rule names it (the implicit "*").
        let mut private = match self.nodes.get(&buf[pos..]) {
            Some(leaf) => leaf.map(|l| l.private),
            None => return Self::done(len, None, fqdn),
        };
        let mut so_far = len;
        for label in labels {
            let parent = pos;
            pos = parent - 1 - label.len();
            buf[pos..parent - 1].copy_from_slice(label);
            buf[parent - 1] = b'.';
            let leaf = match self.nodes.get(&buf[pos..]) {
                Some(leaf) => *leaf,
                None => {
                    pos = parent - 2;
                    buf[pos] = b'*';
                    match self.nodes.get(&buf[pos..]) {
                        Some(leaf) => *leaf,
                        None => break,
                    }
                }
            };
            if let Some(leaf) = leaf
                && !(icann_only && leaf.private)
            {
                private = Some(leaf.private);
                if leaf.exception {
                    len = so_far;
                    break;
                }
                len = so_far + label.len() + 1;
            }
            so_far += label.len() + 1;
        }
        Self::done(len, private, fqdn)
    }

    fn done(len: usize, private: Option<bool>, fqdn: bool) -> (usize, Option<bool>) {
        let len = len + usize::from(fqdn);
        if len == 0 { (0, None) } else { (len, private) }
    }
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
        Ok(Names {
            rules: Rules::parse(psl)?,
        })
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
        let (len, private) = self.rules.suffix(bytes, false);
        let private = private == Some(true);
        let private_priced = private && priced(&name[name.len() - len..]);
        let suffix_len = if private && !private_priced {
            self.rules.suffix(bytes, true).0
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
    fn every_suffix_is_the_publicsuffix_crates() {
        use publicsuffix::{IcannList, List, Psl, Type};
        let all: List = PSL_TEXT.parse().unwrap();
        let icann = IcannList::from(all.clone());
        let rules = &names().rules;
        let theirs = |list: &dyn Fn(&[u8]) -> Option<publicsuffix::Suffix<'_>>, name: &[u8]| {
            list(name).map_or((0, None), |s| {
                (s.as_bytes().len(), s.typ().map(|t| t == Type::Private))
            })
        };
        let mut names_tried = 0;
        let mut check = |name: &str| {
            let name = name.as_bytes();
            assert_eq!(
                rules.suffix(name, false),
                theirs(&|n| all.suffix(n), name),
                "{name:?}"
            );
            assert_eq!(
                rules.suffix(name, true),
                theirs(&|n| icann.suffix(n), name),
                "{name:?} (ICANN)"
            );
            names_tried += 1;
        };
        for line in PSL_TEXT.lines() {
            let Some(rule) = line
                .split_whitespace()
                .next()
                .filter(|r| !r.starts_with("//"))
            else {
                continue;
            };
            let rule = rule.trim_start_matches('!');
            for rule in [rule.to_owned(), idna::domain_to_ascii(rule).unwrap()] {
                let concrete = rule.replace('*', "x");
                for prefix in ["", "a.", "www.a.", "city.", "b.city."] {
                    check(&format!("{prefix}{rule}"));
                    check(&format!("{prefix}{concrete}"));
                    check(&format!("{prefix}{concrete}."));
                }
                // Every shorter suffix of whole labels.
                let mut rest = concrete.as_str();
                while let Some((_, tail)) = rest.split_once('.') {
                    check(&format!("x.{tail}"));
                    rest = tail;
                }
            }
        }
        for odd in [
            "", ".", "..", "a..com", ".com", "com.", "nope", "x.nope", "*", "*.ck", "a.*.ck",
        ] {
            check(odd);
        }
        assert!(names_tried > 100_000, "{names_tried}");
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
