//! Which names are real TLDs: the IANA root zone list plus the Public Suffix List.
//!
//! A feed name counts when
//! - its last label is delegated in the IANA root zone (`iana-tlds.txt`), and
//! - it has one label, or it is a public suffix in the Public Suffix List
//!   (`public_suffix_list.dat`): an exact rule (`co.uk`) or a wildcard (`*.ck` makes
//!   `co.ck` one), unless an exception rule (`!www.ck`) says otherwise.
//!
//! Both PSL sections count. The ICANN section holds the registry-run second levels
//! (`co.uk`, `com.au`); the PRIVATE section holds the suffixes that companies run under
//! a name they own (`us.com`, `br.com`, `eu.com` by CentralNic, `co.com`, `radio.fm`).
//! Registrars sell those exactly like TLDs, and the PSL lists them precisely because the
//! public registers names under them, so a price for `us.com` is a real price. Names the
//! private section holds that no registrar sells (`github.io`) never appear in a feed,
//! so counting the section costs nothing. [`Suffix`] tells the two apart, and the import
//! summary counts the rows that only the private section admits.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use super::{DropReason, ImportError};
use crate::tld;

/// File name of the IANA list inside the TLD directory.
pub const IANA_FILE: &str = "iana-tlds.txt";
/// File name of the Public Suffix List inside the TLD directory.
pub const PSL_FILE: &str = "public_suffix_list.dat";
/// File name of the IANA root zone database dump (`Domain,Type,TLD Manager,...`) inside
/// the TLD directory; optional: without it the catalogue has no types or managers.
pub const ROOT_ZONE_DB_FILE: &str = "root-zone-db.csv";

/// What kind of real name a feed name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// A single label delegated in the root zone (`com`, `xn--p1ai`).
    TopLevel,
    /// A multi-label public suffix from the PSL's ICANN section (`co.uk`).
    Icann,
    /// A multi-label public suffix from the PSL's PRIVATE section (`us.com`).
    Private,
}

/// The IANA root zone list and the Public Suffix List rules, all in canonical
/// (`xn--`, lowercase) form.
#[derive(Debug, Default)]
pub struct TldList {
    iana: HashSet<String>,
    icann: Rules,
    private: Rules,
    /// Canonical TLD -> (type, manager) from the root zone database.
    info: BTreeMap<String, (String, String)>,
}

/// One TLD of the IANA list with what the root zone database says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TldInfo {
    /// Canonical name.
    pub tld: String,
    /// `generic`, `country-code`, ... (empty when the database does not list it).
    pub kind: String,
    /// The TLD manager (empty when unknown or "Not assigned").
    pub manager: String,
}

/// One PSL section's rules.
#[derive(Debug, Default)]
struct Rules {
    /// `co.uk`
    exact: HashSet<String>,
    /// `*.ck` stored as `ck`: every direct child of it is a suffix.
    wildcard: HashSet<String>,
    /// `!www.ck` stored as `www.ck`: not a suffix even though a wildcard matches.
    exception: HashSet<String>,
}

impl Rules {
    fn matches(&self, name: &str) -> bool {
        if self.exception.contains(name) {
            return false;
        }
        if self.exact.contains(name) {
            return true;
        }
        match name.split_once('.') {
            Some((_, parent)) => self.wildcard.contains(parent),
            None => false,
        }
    }

    fn is_exception(&self, name: &str) -> bool {
        self.exception.contains(name)
    }
}

impl TldList {
    /// Reads `iana-tlds.txt` and `public_suffix_list.dat` from `dir`.
    pub fn load(dir: &Path) -> Result<TldList, ImportError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| ImportError::new(&path, e.to_string()))
        };
        let iana = read(IANA_FILE)?;
        let psl = read(PSL_FILE)?;
        let mut list = TldList::from_texts(&iana, &psl);
        let db_path = dir.join(ROOT_ZONE_DB_FILE);
        match std::fs::read(&db_path) {
            Ok(bytes) => list.read_root_zone_db(&bytes, &db_path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ImportError::new(&db_path, e.to_string())),
        }
        if list.iana.is_empty() {
            return Err(ImportError::new(
                &dir.join(IANA_FILE),
                "no TLD names in the file",
            ));
        }
        if list.icann.exact.is_empty() {
            return Err(ImportError::new(
                &dir.join(PSL_FILE),
                "no ICANN rules in the file",
            ));
        }
        Ok(list)
    }

    /// Builds the lists from the two files' text. Lines starting with `#` (IANA) or
    /// `//` (PSL) are comments; names that are not well formed are skipped.
    pub fn from_texts(iana: &str, psl: &str) -> TldList {
        let mut list = TldList::default();
        for line in iana.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Ok(name) = tld::normalize(line) {
                list.iana.insert(name.into_owned());
            }
        }
        let mut private = false;
        for line in psl.lines() {
            let line = line.trim();
            if line.starts_with("// ===BEGIN PRIVATE DOMAINS===") {
                private = true;
            } else if line.starts_with("// ===BEGIN ICANN DOMAINS===") {
                private = false;
            }
            // A rule is the first white-space separated word of a non-comment line.
            let Some(rule) = line.split_whitespace().next() else {
                continue;
            };
            if rule.starts_with("//") {
                continue;
            }
            let rules = if private {
                &mut list.private
            } else {
                &mut list.icann
            };
            if let Some(rest) = rule.strip_prefix("*.") {
                if let Ok(name) = tld::normalize(rest) {
                    rules.wildcard.insert(name.into_owned());
                }
            } else if let Some(rest) = rule.strip_prefix('!') {
                if let Ok(name) = tld::normalize(rest) {
                    rules.exception.insert(name.into_owned());
                }
            } else if let Ok(name) = tld::normalize(rule) {
                rules.exact.insert(name.into_owned());
            }
        }
        list
    }

    /// Reads the root zone database dump (`Domain,Type,TLD Manager,...`, RFC 4180: a
    /// manager may hold commas and line breaks; right-to-left names are wrapped in
    /// direction marks, which are dropped). Names are put in canonical form; runs
    /// of white space in a manager become one space; "Not assigned" counts as unknown.
    pub fn read_root_zone_db(&mut self, bytes: &[u8], path: &Path) -> Result<(), ImportError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(bytes);
        let header = reader
            .headers()
            .map_err(|e| ImportError::new(path, e.to_string()))?
            .clone();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h.trim_start_matches('\u{feff}') == name)
                .ok_or_else(|| ImportError::new(path, format!("no column {name:?}")))
        };
        let (domain, kind, manager) = (col("Domain")?, col("Type")?, col("TLD Manager")?);
        for record in reader.records() {
            let record = record.map_err(|e| ImportError::new(path, e.to_string()))?;
            let field = |i: usize| record.get(i).unwrap_or("");
            // Right-to-left names come wrapped in direction marks (U+200F .name U+200E).
            let raw = field(domain).trim_matches(['\u{200e}', '\u{200f}']);
            let Ok(name) = tld::normalize(raw) else {
                continue;
            };
            let manager = field(manager)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let manager = if manager == "Not assigned" {
                String::new()
            } else {
                manager
            };
            self.info
                .insert(name.into_owned(), (field(kind).trim().to_string(), manager));
        }
        Ok(())
    }

    /// Every TLD of the IANA list, sorted by canonical name, with its type and manager
    /// from the root zone database when it lists them.
    pub fn catalogue(&self) -> Vec<TldInfo> {
        let mut names: Vec<&String> = self.iana.iter().collect();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let (kind, manager) = self.info.get(n).cloned().unwrap_or_default();
                TldInfo {
                    tld: n.clone(),
                    kind,
                    manager,
                }
            })
            .collect()
    }

    /// How many TLDs the IANA list holds.
    pub fn iana_len(&self) -> usize {
        self.iana.len()
    }

    /// Whether a canonical single label is delegated in the root zone.
    pub fn is_iana(&self, label: &str) -> bool {
        self.iana.contains(label)
    }

    /// Decides whether a canonical name (see [`tld::normalize`]) is a real TLD or public
    /// suffix, and of which kind.
    pub fn check(&self, name: &str) -> Result<Suffix, DropReason> {
        if !self.iana.contains(tld::last_label(name)) {
            return Err(DropReason::NotInRootZone);
        }
        if !name.contains('.') {
            return Ok(Suffix::TopLevel);
        }
        if self.icann.is_exception(name) || self.private.is_exception(name) {
            return Err(DropReason::NotPublicSuffix);
        }
        if self.icann.matches(name) {
            Ok(Suffix::Icann)
        } else if self.private.matches(name) {
            Ok(Suffix::Private)
        } else {
            Err(DropReason::NotPublicSuffix)
        }
    }
}

impl fmt::Display for Suffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Suffix::TopLevel => "top-level",
            Suffix::Icann => "PSL ICANN suffix",
            Suffix::Private => "PSL private suffix",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IANA: &str = "# Version 2026093003, Last Updated Wed Sep 30 07:07:01 2026 UTC\nCOM\nUK\nCK\nNG\nxn--p1ai\nJP\n";
    const PSL: &str = "// header\n// ===BEGIN ICANN DOMAINS===\ncom\nuk\nco.uk\n*.ck\n!www.ck\nkawasaki.jp\n*.kawasaki.jp\n!city.kawasaki.jp\ncom.ng\n// Russia\nрф\nком.рф  // a trailing comment\n// ===END ICANN DOMAINS===\n// ===BEGIN PRIVATE DOMAINS===\nus.com\ngithub.io\n// ===END PRIVATE DOMAINS===\n";

    fn list() -> TldList {
        TldList::from_texts(IANA, PSL)
    }

    #[test]
    fn single_labels_need_the_root_zone() {
        let l = list();
        assert_eq!(l.iana_len(), 6);
        assert_eq!(l.check("com"), Ok(Suffix::TopLevel));
        assert_eq!(l.check("xn--p1ai"), Ok(Suffix::TopLevel));
        // Handshake names and retired TLDs are not in the root zone.
        assert_eq!(l.check("0zone"), Err(DropReason::NotInRootZone));
        assert_eq!(l.check("io"), Err(DropReason::NotInRootZone));
    }

    #[test]
    fn multi_labels_need_a_psl_rule() {
        let l = list();
        assert_eq!(l.check("co.uk"), Ok(Suffix::Icann));
        assert_eq!(l.check("com.ng"), Ok(Suffix::Icann));
        assert_eq!(l.check("premium.ng"), Err(DropReason::NotPublicSuffix));
        assert_eq!(l.check("us.com"), Ok(Suffix::Private));
        // A private rule under a TLD outside the root list does not help.
        assert_eq!(l.check("github.io"), Err(DropReason::NotInRootZone));
    }

    #[test]
    fn wildcards_and_exceptions() {
        let l = list();
        assert_eq!(l.check("co.ck"), Ok(Suffix::Icann));
        assert_eq!(l.check("www.ck"), Err(DropReason::NotPublicSuffix));
        assert_eq!(l.check("foo.kawasaki.jp"), Ok(Suffix::Icann));
        assert_eq!(
            l.check("city.kawasaki.jp"),
            Err(DropReason::NotPublicSuffix)
        );
        assert_eq!(l.check("a.b.ck"), Err(DropReason::NotPublicSuffix));
    }

    #[test]
    fn unicode_rules_are_stored_as_punycode() {
        let l = list();
        let name = tld::normalize("ком.рф").unwrap();
        assert_eq!(l.check(&name), Ok(Suffix::Icann));
    }
}
