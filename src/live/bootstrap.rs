//! Which RDAP server answers for which TLD (RFC 9224 bootstrap).
//!
//! Two sources, one table:
//!
//! - the IANA root zone database shipped in `snapshots/tlds/root-zone-db.csv` (its
//!   `RDAP URLs` column is IANA's `dns.json` as of the dump's date, see
//!   `PROVENANCE.root-zone-db.txt`), compiled into the binary: [`Bootstrap::shipped`];
//! - a file in IANA's own `dns.json` format (`serve --rdap-bootstrap FILE`), for a newer
//!   copy of IANA's registry, or for tests that point tldsnap at their own servers:
//!   [`Bootstrap::from_dns_json`].
//!
//! Only `https://` base URLs are kept: registration data travels over TLS or not at all
//! (RFC 9224 section 3 lets a registry also list `http://`; two TLDs of the shipped
//! dump list only an `http://` server, and they get the WHOIS fallback instead).
//!
//! A domain's service is the entry that matches the most labels at its end
//! (RFC 9224 section 4: `example.co.uk` takes a `co.uk` entry over a `uk` one).

use std::collections::HashMap;

use crate::tld;

/// The root zone database dump shipped with the data.
pub const SHIPPED_ROOT_ZONE_DB: &str = include_str!("../../snapshots/tlds/root-zone-db.csv");

/// Largest bootstrap file read: IANA's `dns.json` is about 70 KiB.
pub const MAX_BOOTSTRAP_BYTES: usize = 8 << 20;

/// The RDAP base URLs of every TLD the bootstrap data knows.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    /// Canonical suffix (`com`, `xn--p1ai`, `co.uk`) to its base URLs, each ending in `/`.
    by_suffix: HashMap<String, Vec<String>>,
    /// Where the table came from, for logs and `docs/LIVE.md` (`shipped root-zone-db.csv`,
    /// a file name).
    source: String,
    /// The `publication` date of a `dns.json`, when it had one.
    publication: Option<String>,
}

impl Bootstrap {
    /// The table of the shipped root zone database (`snapshots/tlds/root-zone-db.csv`).
    pub fn shipped() -> Bootstrap {
        Bootstrap::from_root_zone_db(SHIPPED_ROOT_ZONE_DB)
            .expect("the shipped root zone database parses")
    }

    /// Reads the root zone database dump (`Domain,Type,TLD Manager,RDAP URLs,...`;
    /// RFC 4180 quoting). TLDs without an RDAP URL are left out.
    pub fn from_root_zone_db(text: &str) -> Result<Bootstrap, String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text.as_bytes());
        let header = reader.headers().map_err(|e| e.to_string())?.clone();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h.trim_start_matches('\u{feff}') == name)
                .ok_or_else(|| format!("no column {name:?}"))
        };
        let (domain, urls) = (col("Domain")?, col("RDAP URLs")?);
        let mut table = Bootstrap {
            source: "shipped snapshots/tlds/root-zone-db.csv".to_owned(),
            ..Bootstrap::default()
        };
        for record in reader.records() {
            let record = record.map_err(|e| e.to_string())?;
            // Right-to-left names come wrapped in direction marks (U+200F .name U+200E).
            let name = record
                .get(domain)
                .unwrap_or("")
                .trim_matches(['\u{200e}', '\u{200f}']);
            let listed = record.get(urls).unwrap_or("").split_whitespace();
            table.insert(name, listed);
        }
        Ok(table)
    }

    /// Reads a bootstrap file in IANA's `dns.json` format (RFC 9224 section 4):
    /// `{"version": "1.0", "publication": "…", "services": [[["com", "net"],
    /// ["https://rdap.example/"]], …]}`.
    pub fn from_dns_json(text: &str, source: &str) -> Result<Bootstrap, String> {
        #[derive(serde::Deserialize)]
        struct File {
            #[serde(default)]
            publication: Option<String>,
            services: Vec<(Vec<String>, Vec<String>)>,
        }
        let file: File = serde_json::from_str(text).map_err(|e| {
            format!(
                "not an RDAP bootstrap file: {e} (the format is IANA's dns.json: \
                 {{\"services\": [[[\"tld\", ...], [\"https://rdap.example/\", ...]], ...]}})"
            )
        })?;
        let mut table = Bootstrap {
            source: source.to_owned(),
            publication: file.publication,
            ..Bootstrap::default()
        };
        for (names, urls) in &file.services {
            for name in names {
                table.insert(name, urls.iter().map(String::as_str));
            }
        }
        Ok(table)
    }

    /// Reads `path` with [`Bootstrap::from_dns_json`].
    pub fn load(path: &std::path::Path) -> Result<Bootstrap, String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read the RDAP bootstrap {}: {e}", path.display()))?;
        if bytes.len() > MAX_BOOTSTRAP_BYTES {
            return Err(format!(
                "the RDAP bootstrap {} is larger than {MAX_BOOTSTRAP_BYTES} bytes",
                path.display()
            ));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("the RDAP bootstrap {} is not UTF-8", path.display()))?;
        Bootstrap::from_dns_json(&text, &path.display().to_string())
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Adds the `https://` URLs of `urls` for `name` (any form [`tld::normalize`]
    /// takes); a name that is not one, or without such a URL, adds nothing.
    fn insert<'a>(&mut self, name: &str, urls: impl Iterator<Item = &'a str>) {
        let Ok(name) = tld::normalize(name) else {
            return;
        };
        let kept: Vec<String> = urls.filter_map(base_url).collect();
        if kept.is_empty() {
            return;
        }
        let entry = self.by_suffix.entry(name.into_owned()).or_default();
        for url in kept {
            if !entry.contains(&url) {
                entry.push(url);
            }
        }
    }

    /// The base URLs of the service for `domain` (canonical form): the entry matching
    /// the most labels at its end; `None` when no entry matches.
    pub fn lookup(&self, domain: &str) -> Option<&[String]> {
        let mut at = 0;
        loop {
            if let Some(urls) = self.by_suffix.get(&domain[at..]) {
                return Some(urls);
            }
            at += domain[at..].find('.')? + 1;
        }
    }

    /// How many suffixes have a service.
    pub fn len(&self) -> usize {
        self.by_suffix.len()
    }

    /// Whether no suffix has a service.
    pub fn is_empty(&self) -> bool {
        self.by_suffix.is_empty()
    }

    /// Where the table came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The `publication` date of the `dns.json` read, when it had one.
    pub fn publication(&self) -> Option<&str> {
        self.publication.as_deref()
    }
}

/// `url` as a base URL (with a trailing `/`) when it is an `https://` URL with a host
/// and nothing tldsnap would have to trust beyond it (no user info, query or fragment).
fn base_url(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = url.strip_prefix("https://")?;
    let host_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..host_end];
    if authority.is_empty()
        || authority.contains('@')
        || url.contains(['?', '#'])
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    let mut base = url.to_owned();
    if !base.ends_with('/') {
        base.push('/');
    }
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_knows_the_big_registries() {
        let b = Bootstrap::shipped();
        assert!(b.len() > 1000, "{}", b.len());
        assert_eq!(
            b.lookup("example.com").unwrap(),
            ["https://rdap.verisign.com/com/v1/"]
        );
        // A second-level name falls back to its TLD's service.
        assert_eq!(
            b.lookup("example.co.uk").unwrap(),
            ["https://rdap.nominet.uk/uk/"]
        );
        // TLDs whose registry runs no RDAP server (the WHOIS fallback's cases).
        assert_eq!(b.lookup("example.de"), None);
        assert_eq!(b.lookup("example.io"), None);
        // Names listed only with http:// are not kept.
        assert!(
            b.by_suffix
                .values()
                .flatten()
                .all(|u| u.starts_with("https://"))
        );
        // IDN TLDs are keyed in xn-- form.
        assert!(b.by_suffix.keys().all(|k| k.is_ascii()));
    }

    #[test]
    fn dns_json_is_read_with_the_longest_match() {
        let text = r#"{"version": "1.0", "publication": "2026-01-01T00:00:00Z",
            "description": "test",
            "services": [
              [["uk"], ["https://rdap.uk.test/"]],
              [["co.uk", "ORG.UK"], ["https://rdap.co.test/base", "http://plain.test/"]],
              [["рф"], ["https://rdap.rf.test/"]],
              [["nohttps"], ["http://only.test/"]],
              [["bad..name"], ["https://x.test/"]]
            ]}"#;
        let b = Bootstrap::from_dns_json(text, "test").unwrap();
        assert_eq!(b.publication(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(b.lookup("a.example.uk").unwrap(), ["https://rdap.uk.test/"]);
        assert_eq!(
            b.lookup("example.co.uk").unwrap(),
            ["https://rdap.co.test/base/"]
        );
        assert_eq!(
            b.lookup("example.org.uk").unwrap(),
            ["https://rdap.co.test/base/"]
        );
        assert_eq!(
            b.lookup("xn--e1afmkfd.xn--p1ai").unwrap(),
            ["https://rdap.rf.test/"]
        );
        assert_eq!(b.lookup("example.nohttps"), None);
        assert_eq!(b.lookup("example.com"), None);
        assert_eq!(b.len(), 4);
    }

    #[test]
    fn bad_files_say_what_they_should_be() {
        for bad in ["", "[]", "{\"services\": 3}", "{\"services\": [[\"com\"]]}"] {
            let err = Bootstrap::from_dns_json(bad, "t").unwrap_err();
            assert!(err.contains("dns.json"), "{bad}: {err}");
        }
    }

    #[test]
    fn base_urls_are_https_without_credentials() {
        assert_eq!(
            base_url("https://rdap.test/v1").as_deref(),
            Some("https://rdap.test/v1/")
        );
        assert_eq!(
            base_url("https://127.0.0.1:8443/").as_deref(),
            Some("https://127.0.0.1:8443/")
        );
        assert_eq!(base_url("http://rdap.test/"), None);
        assert_eq!(base_url("https:///x"), None);
        assert_eq!(base_url("https://user:pw@rdap.test/"), None);
        assert_eq!(base_url("https://rdap.test/?q=1"), None);
        assert_eq!(base_url("ftp://rdap.test/"), None);
    }
}
