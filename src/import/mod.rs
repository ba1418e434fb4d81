//! Real registrar feeds -> the canonical price source (contract section 2).
//!
//! `tldsnap import --feeds DIR --output SRC_DIR` reads one folder per registrar under
//! `DIR` (the layout of `snapshots/feeds/`), keeps what is a real, priced offer, and
//! writes `registrars.csv`, `prices.csv`, `history.csv` and `tlds.csv`.
//!
//! # Flow
//!
//! ```text
//! DIR/<feed>/<current file>   ──feeds::parse──▶ raw rows (feed keys, prices in cents)
//! DIR/<feed>/history/*        ──feeds::parse──▶ raw rows of each dated version
//! raw rows ──clean (tlds::TldList, offer rules)──▶ canonical (tld, offer) or a DropReason
//! current rows            ──▶ prices.csv   (updated_at = the file's own date)
//! every version, by date  ──history::changes──▶ history.csv
//! ```
//!
//! # The rules every feed shares
//!
//! - The name is turned into canonical form ([`crate::tld::normalize`]: Unicode IDNs
//!   become `xn--`), then must be a real TLD or public suffix ([`tlds::TldList`]).
//! - `register` is the first-year price a new customer pays without a coupon code
//!   (which field that is differs per feed: see [`feeds`]). Zero or missing means "not
//!   offered for registration"; the row is then kept as renewal-only when it has a
//!   renewal price and dropped otherwise.
//! - A row with a registration price but no renewal price is dropped (the builder
//!   refuses it: contract section 2).
//! - `transfer` 0 is a real free transfer (the `.uk` family); a missing transfer price
//!   stays empty.
//! - One row per (tld, registrar): when a feed lists one name twice (say its Unicode and
//!   its `xn--` key), the row whose key already was canonical wins, else the first in
//!   file order; the other is counted as [`DropReason::Duplicate`].
//! - Every dropped row is counted by reason in the per-feed [`FeedSummary`].
//!
//! A feed that cannot be read at all (not JSON, wrong shape, no date) fails the whole
//! import with `file: what`, and nothing is written.

pub mod feeds;
pub mod history;
pub mod report;
pub mod tlds;
pub mod write;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::time;
use crate::tld;
use feeds::{Feed, Field, RawRow};
use tlds::{Suffix, TldList};

/// File in the feeds directory that dates the feed files that carry no date of their
/// own (`file,date,evidence`; `file` relative to the feeds directory).
pub const DATES_FILE: &str = "dates.csv";

/// A registrar of the price source (`registrars.csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registrar {
    /// Source key (`[a-z0-9][a-z0-9_-]{0,63}`).
    pub key: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Home page.
    pub homepage: &'static str,
}

/// One registrar's prices for one TLD, in cents. `None` = not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offer {
    /// First year for a new customer, no coupon.
    pub register: Option<u32>,
    /// One year of renewal.
    pub renew: Option<u32>,
    /// Transfer in (usually with one year added); `Some(0)` is a free transfer.
    pub transfer: Option<u32>,
}

/// A row of `prices.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceRow {
    /// Canonical TLD.
    pub tld: String,
    /// Registrar key.
    pub registrar: &'static str,
    /// The prices.
    pub offer: Offer,
    /// The feed file's own date, milliseconds since the Unix epoch.
    pub updated_ms: i64,
}

/// A row of `history.csv`: the prices a (tld, registrar) had from `day` on. An offer with
/// all three prices empty records that the feed stopped listing the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    /// Days since 1970-01-01 (UTC) of the version where this state was first seen.
    pub day: i64,
    /// Canonical TLD.
    pub tld: String,
    /// Registrar key.
    pub registrar: &'static str,
    /// The prices.
    pub offer: Offer,
}

/// The canonical price source, sorted as it is written.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Source {
    /// Registrars of the feeds that were present, by key.
    pub registrars: Vec<Registrar>,
    /// Sorted by (tld, registrar).
    pub prices: Vec<PriceRow>,
    /// Sorted by (tld, registrar, day).
    pub history: Vec<HistoryRow>,
    /// Every TLD of the IANA list, sorted by name, with its type and manager.
    pub tlds: Vec<tlds::TldInfo>,
}

/// Why a feed row did not make it into the price source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// Marked as a Handshake (alternative root) name by the feed.
    Handshake,
    /// The key is not a well-formed domain name.
    MalformedName,
    /// The last label is not delegated in the IANA root zone (Handshake names, retired
    /// TLDs, typos).
    NotInRootZone,
    /// A multi-label name that is not a public suffix.
    NotPublicSuffix,
    /// No first-year price and no renewal price (zero or null).
    NotOffered,
    /// A first-year price but no renewal price.
    NoRenewal,
    /// A price that is negative, not a number, or has more than 2 decimals.
    BadPrice,
    /// A price in a currency other than USD.
    NotUsd,
    /// The row is not an object of the expected shape.
    MalformedRow,
    /// A second row for a name the feed already listed.
    Duplicate,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 10] = [
        DropReason::Handshake,
        DropReason::MalformedName,
        DropReason::NotInRootZone,
        DropReason::NotPublicSuffix,
        DropReason::NotOffered,
        DropReason::NoRenewal,
        DropReason::BadPrice,
        DropReason::NotUsd,
        DropReason::MalformedRow,
        DropReason::Duplicate,
    ];

    /// Short stable label used in the summary.
    pub fn label(self) -> &'static str {
        match self {
            DropReason::Handshake => "handshake",
            DropReason::MalformedName => "malformed name",
            DropReason::NotInRootZone => "not in IANA root zone",
            DropReason::NotPublicSuffix => "not a public suffix",
            DropReason::NotOffered => "not offered (no first-year, no renewal price)",
            DropReason::NoRenewal => "first-year price without renewal price",
            DropReason::BadPrice => "unreadable price",
            DropReason::NotUsd => "not USD",
            DropReason::MalformedRow => "malformed row",
            DropReason::Duplicate => "duplicate name",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A failure that stops the import: `file: what`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file (or directory) at fault.
    pub path: PathBuf,
    /// What is wrong with it.
    pub what: String,
}

impl ImportError {
    /// An error about `path`.
    pub fn new(path: &Path, what: impl Into<String>) -> ImportError {
        ImportError {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for ImportError {}

/// What the import did with one feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedSummary {
    /// Registrar key.
    pub registrar: &'static str,
    /// The current file, relative to the feeds directory.
    pub file: String,
    /// The current file's date (ms since the epoch): every price's `updated_at`.
    pub date_ms: i64,
    /// Rows in the current file.
    pub read: usize,
    /// Rows written to `prices.csv`.
    pub kept: usize,
    /// Of the kept rows, how many sell (have a first-year price).
    pub selling: usize,
    /// Of the kept rows, how many are renewal-only.
    pub renewal_only: usize,
    /// Of the kept rows, how many have a free (0) transfer.
    pub free_transfer: usize,
    /// Of the kept rows, how many have no transfer price.
    pub no_transfer: usize,
    /// Of the kept rows, how many only the PSL's private section admits.
    pub private_suffix: usize,
    /// Dropped rows by reason (reasons with no rows are absent).
    pub dropped: BTreeMap<DropReason, usize>,
    /// Every dropped row of the current file: (the key as the feed wrote it, reason).
    pub dropped_rows: Vec<(String, DropReason)>,
    /// Dated versions read for history (history files plus the current file).
    pub versions: usize,
    /// First and last version day.
    pub version_days: (i64, i64),
    /// Rows this feed contributed to `history.csv`.
    pub history_rows: usize,
}

impl FeedSummary {
    /// All dropped rows.
    pub fn dropped_total(&self) -> usize {
        self.dropped.values().sum()
    }
}

/// The result of an import: the source to write and what happened per feed.
#[derive(Debug, Clone)]
pub struct Import {
    /// The canonical price source.
    pub source: Source,
    /// One entry per feed that was present, in registrar key order.
    pub feeds: Vec<FeedSummary>,
    /// Folders of the feeds directory that no importer reads.
    pub unknown_folders: Vec<String>,
}

/// A feed file's rows after cleaning, with its date.
struct Version {
    ms: i64,
    /// The feed's current file (it wins a tie with a history file of the same time).
    current: bool,
    /// File name, to order versions with the same timestamp.
    name: String,
    rows: BTreeMap<String, (Offer, Suffix)>,
    dropped: Vec<(String, DropReason)>,
    read: usize,
}

/// Imports every known feed folder under `feeds_dir`, checking names against `tlds`.
///
/// Reads `feeds_dir/dates.csv` when it exists to date the files that carry no date.
/// Fails on the first feed file that cannot be read at all; never writes anything.
pub fn import(feeds_dir: &Path, tlds: &TldList) -> Result<Import, ImportError> {
    let meta =
        std::fs::metadata(feeds_dir).map_err(|e| ImportError::new(feeds_dir, e.to_string()))?;
    if !meta.is_dir() {
        return Err(ImportError::new(feeds_dir, "not a directory"));
    }
    let dates = Dates::load(&feeds_dir.join(DATES_FILE))?;
    let mut source = Source::default();
    let mut summaries = Vec::new();
    let mut unknown_folders = Vec::new();

    let mut folders: Vec<String> = Vec::new();
    let entries =
        std::fs::read_dir(feeds_dir).map_err(|e| ImportError::new(feeds_dir, e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| ImportError::new(feeds_dir, e.to_string()))?;
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            folders.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    folders.sort();
    for folder in &folders {
        if Feed::by_folder(folder).is_none() {
            unknown_folders.push(folder.clone());
        }
    }

    let mut present: Vec<&'static Feed> = feeds::FEEDS
        .iter()
        .filter(|f| folders.iter().any(|d| d == f.folder))
        .collect();
    present.sort_by_key(|f| f.registrar.key);
    if present.is_empty() {
        return Err(ImportError::new(
            feeds_dir,
            format!(
                "no feed folder found (expected one of: {})",
                feeds::FEEDS
                    .iter()
                    .map(|f| f.folder)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }

    for feed in present {
        let (summary, prices, history) = import_feed(feeds_dir, feed, tlds, &dates)?;
        source.registrars.push(feed.registrar);
        source.prices.extend(prices);
        source.history.extend(history);
        summaries.push(summary);
    }
    source
        .prices
        .sort_by(|a, b| (a.tld.as_str(), a.registrar).cmp(&(b.tld.as_str(), b.registrar)));
    source.tlds = tlds.catalogue();
    source.history.sort_by(|a, b| {
        (a.tld.as_str(), a.registrar, a.day).cmp(&(b.tld.as_str(), b.registrar, b.day))
    });
    Ok(Import {
        source,
        feeds: summaries,
        unknown_folders,
    })
}

type FeedResult = (FeedSummary, Vec<PriceRow>, Vec<HistoryRow>);

fn import_feed(
    dir: &Path,
    feed: &'static Feed,
    tlds: &TldList,
    dates: &Dates,
) -> Result<FeedResult, ImportError> {
    let folder = dir.join(feed.folder);
    let current_rel = format!("{}/{}", feed.folder, feed.current);
    let mut current = read_version(dir, &current_rel, feed, tlds, dates)?;
    current.current = true;

    let mut versions = vec![];
    let history_dir = folder.join("history");
    if history_dir.is_dir() {
        let mut names = Vec::new();
        let entries = std::fs::read_dir(&history_dir)
            .map_err(|e| ImportError::new(&history_dir, e.to_string()))?;
        for entry in entries {
            let entry = entry.map_err(|e| ImportError::new(&history_dir, e.to_string()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if feed.is_history_file(&name) {
                names.push(name);
            }
        }
        names.sort();
        for name in names {
            let rel = format!("{}/history/{}", feed.folder, name);
            versions.push(read_version(dir, &rel, feed, tlds, dates)?);
        }
    }

    let prices: Vec<PriceRow> = current
        .rows
        .iter()
        .map(|(name, (offer, _))| PriceRow {
            tld: name.clone(),
            registrar: feed.registrar.key,
            offer: *offer,
            updated_ms: current.ms,
        })
        .collect();
    let kept = prices.len();
    let count = |f: &dyn Fn(&Offer) -> bool| current.rows.values().filter(|(o, _)| f(o)).count();
    let selling = count(&|o| o.register.is_some());
    let free_transfer = count(&|o| o.transfer == Some(0));
    let no_transfer = count(&|o| o.transfer.is_none());
    let private_suffix = current
        .rows
        .values()
        .filter(|(_, s)| *s == Suffix::Private)
        .count();

    let mut summary = FeedSummary {
        registrar: feed.registrar.key,
        file: current_rel,
        date_ms: current.ms,
        read: current.read,
        kept,
        selling,
        renewal_only: kept - selling,
        free_transfer,
        no_transfer,
        private_suffix,
        dropped: count_reasons(&current.dropped),
        dropped_rows: current.dropped.clone(),
        versions: versions.len() + 1,
        version_days: (0, 0),
        history_rows: 0,
    };

    versions.push(current);
    // Time order; at the same instant the current file comes last, so it is the state
    // of its day and the history ends at the prices of prices.csv.
    versions.sort_by(|a, b| (a.ms, a.current, &a.name).cmp(&(b.ms, b.current, &b.name)));
    let days: Vec<history::Day> = versions
        .into_iter()
        .map(|v| history::Day {
            day: v.ms.div_euclid(time::MS_PER_DAY),
            rows: v.rows.into_iter().map(|(k, (o, _))| (k, o)).collect(),
        })
        .collect();
    summary.version_days = (
        days.first().map_or(0, |d| d.day),
        days.last().map_or(0, |d| d.day),
    );
    let history = history::changes(feed.registrar.key, days);
    summary.history_rows = history.len();
    Ok((summary, prices, history))
}

/// Reads, parses, dates and cleans one feed file.
fn read_version(
    dir: &Path,
    rel: &str,
    feed: &Feed,
    tlds: &TldList,
    dates: &Dates,
) -> Result<Version, ImportError> {
    let path = dir.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| ImportError::new(&path, e.to_string()))?;
    let parsed = (feed.parse)(&bytes).map_err(|what| ImportError::new(&path, what))?;
    let file_name = rel.rsplit('/').next().unwrap_or(rel);
    let ms = match parsed
        .date_ms
        .or_else(|| dates.get(rel))
        .or_else(|| date_in_name(file_name))
    {
        Some(ms) => ms,
        None => {
            return Err(ImportError::new(
                &path,
                format!(
                    "the file carries no date and none is in its name; add a line `{rel},YYYY-MM-DD,<evidence>` to {}",
                    dir.join(DATES_FILE).display()
                ),
            ));
        }
    };
    let read = parsed.rows.len();
    let (rows, dropped) = clean(parsed.rows, tlds);
    Ok(Version {
        ms,
        current: false,
        name: file_name.to_string(),
        rows,
        dropped,
        read,
    })
}

/// Kept rows by canonical name, and every dropped row as (feed key, reason) in file
/// order.
type Cleaned = (BTreeMap<String, (Offer, Suffix)>, Vec<(String, DropReason)>);

/// Applies the shared rules to one file's rows (see the module docs).
fn clean(raw: Vec<RawRow>, tlds: &TldList) -> Cleaned {
    let mut dropped: Vec<(String, DropReason)> = Vec::new();
    // canonical name -> (offer, suffix, key was canonical, feed key)
    let mut kept: HashMap<String, (Offer, Suffix, bool, String)> = HashMap::new();
    for row in raw {
        match clean_row(&row, tlds) {
            Err(reason) => dropped.push((row.key, reason)),
            Ok((name, offer, suffix)) => {
                let canonical_key = row.key == name;
                match kept.get_mut(&name) {
                    None => {
                        kept.insert(name, (offer, suffix, canonical_key, row.key));
                    }
                    Some(existing) if canonical_key && !existing.2 => {
                        let loser = std::mem::replace(existing, (offer, suffix, true, row.key));
                        dropped.push((loser.3, DropReason::Duplicate));
                    }
                    Some(_) => dropped.push((row.key, DropReason::Duplicate)),
                }
            }
        }
    }
    let rows = kept
        .into_iter()
        .map(|(k, (o, s, _, _))| (k, (o, s)))
        .collect();
    (rows, dropped)
}

/// Counts dropped rows by reason.
fn count_reasons(dropped: &[(String, DropReason)]) -> BTreeMap<DropReason, usize> {
    let mut counts = BTreeMap::new();
    for (_, reason) in dropped {
        *counts.entry(*reason).or_default() += 1;
    }
    counts
}

fn clean_row(row: &RawRow, tlds: &TldList) -> Result<(String, Offer, Suffix), DropReason> {
    if row.malformed {
        return Err(DropReason::MalformedRow);
    }
    if row.handshake {
        return Err(DropReason::Handshake);
    }
    let name = tld::normalize(&row.key)
        .map_err(|_| DropReason::MalformedName)?
        .into_owned();
    let suffix = tlds.check(&name)?;
    if !row.usd {
        return Err(DropReason::NotUsd);
    }
    let get = |f: &Field| match f {
        Field::Missing => Ok(None),
        Field::Cents(c) => Ok(Some(*c)),
        Field::Bad => Err(DropReason::BadPrice),
    };
    let register = get(&row.register)?.filter(|c| *c > 0);
    let renew = get(&row.renew)?.filter(|c| *c > 0);
    let transfer = get(&row.transfer)?;
    match (register, renew) {
        (None, None) => Err(DropReason::NotOffered),
        (Some(_), None) => Err(DropReason::NoRenewal),
        _ => Ok((
            name,
            Offer {
                register,
                renew,
                transfer,
            },
            suffix,
        )),
    }
}

/// `dates.csv`: the date of each feed file that carries none of its own.
#[derive(Debug, Default)]
struct Dates(HashMap<String, i64>);

impl Dates {
    fn load(path: &Path) -> Result<Dates, ImportError> {
        if !path.exists() {
            return Ok(Dates::default());
        }
        let mut reader =
            csv::Reader::from_path(path).map_err(|e| ImportError::new(path, e.to_string()))?;
        let mut map = HashMap::new();
        for (i, record) in reader.records().enumerate() {
            let line = i + 2;
            let record = record.map_err(|e| ImportError::new(path, e.to_string()))?;
            let (Some(file), Some(date)) = (record.get(0), record.get(1)) else {
                return Err(ImportError::new(
                    path,
                    format!("line {line}: expected file,date,evidence"),
                ));
            };
            let ms = parse_day_or_instant(date.trim()).ok_or_else(|| {
                ImportError::new(
                    path,
                    format!("line {line}: {date:?} is neither YYYY-MM-DD nor RFC 3339"),
                )
            })?;
            map.insert(file.trim().to_string(), ms);
        }
        Ok(Dates(map))
    }

    fn get(&self, rel: &str) -> Option<i64> {
        self.0.get(rel).copied()
    }
}

/// `YYYY-MM-DD` (midnight UTC) or an RFC 3339 instant, as ms since the epoch.
pub fn parse_day_or_instant(s: &str) -> Option<i64> {
    time::parse_date(s)
        .map(|d| d * time::MS_PER_DAY)
        .or_else(|| time::parse_rfc3339(s))
}

/// The first `YYYY-MM-DD` in a file name (`dynadot_2021-11-22_898d3b8980.json`), as
/// midnight UTC.
pub fn date_in_name(name: &str) -> Option<i64> {
    let b = name.as_bytes();
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let s = name.get(i..i + 10)?;
        let before_ok = i == 0 || !b[i - 1].is_ascii_digit();
        let after_ok = b.get(i + 10).is_none_or(|c| !c.is_ascii_digit());
        if before_ok && after_ok {
            time::parse_date(s).map(|d| d * time::MS_PER_DAY)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tlds() -> TldList {
        TldList::from_texts(
            "com\nuk\nxyz\nxn--mk1bu44c\npro\n",
            "// ===BEGIN ICANN DOMAINS===\ncom\nuk\nco.uk\n// ===END ICANN DOMAINS===\n// ===BEGIN PRIVATE DOMAINS===\nus.com\n",
        )
    }

    fn row(key: &str, reg: Field, renew: Field, transfer: Field) -> RawRow {
        RawRow {
            key: key.to_string(),
            register: reg,
            renew,
            transfer,
            ..RawRow::default()
        }
    }

    use Field::{Cents, Missing};

    #[test]
    fn offer_rules() {
        let t = tlds();
        let ok = |r: RawRow| clean_row(&r, &t).map(|(n, o, _)| (n, o));
        assert_eq!(
            ok(row("COM", Cents(1088), Cents(1088), Cents(0))),
            Ok((
                "com".into(),
                Offer {
                    register: Some(1088),
                    renew: Some(1088),
                    transfer: Some(0)
                }
            ))
        );
        // Zero first-year price: renewal-only.
        assert_eq!(
            ok(row("xyz", Cents(0), Cents(1317), Missing)),
            Ok((
                "xyz".into(),
                Offer {
                    register: None,
                    renew: Some(1317),
                    transfer: None
                }
            ))
        );
        assert_eq!(
            ok(row("pro", Cents(0), Cents(0), Cents(0))),
            Err(DropReason::NotOffered)
        );
        assert_eq!(
            ok(row("pro", Missing, Missing, Missing)),
            Err(DropReason::NotOffered)
        );
        assert_eq!(
            ok(row("pro", Cents(100), Missing, Missing)),
            Err(DropReason::NoRenewal)
        );
        assert_eq!(
            ok(row("pro", Field::Bad, Cents(1), Missing)),
            Err(DropReason::BadPrice)
        );
        assert_eq!(
            ok(row("0zone", Cents(100), Cents(100), Missing)),
            Err(DropReason::NotInRootZone)
        );
        assert_eq!(
            ok(row("a..b", Cents(100), Cents(100), Missing)),
            Err(DropReason::MalformedName)
        );
        assert_eq!(
            ok(row("aaa.pro", Cents(100), Cents(100), Missing)),
            Err(DropReason::NotPublicSuffix)
        );
        let mut hs = row("xyz", Cents(100), Cents(100), Missing);
        hs.handshake = true;
        assert_eq!(ok(hs), Err(DropReason::Handshake));
        let mut eur = row("xyz", Cents(100), Cents(100), Missing);
        eur.usd = false;
        assert_eq!(ok(eur), Err(DropReason::NotUsd));
    }

    #[test]
    fn duplicates_keep_the_canonical_key() {
        let t = tlds();
        let rows = vec![
            row("닷컴", Cents(100), Cents(100), Missing),
            row("xn--mk1bu44c", Cents(200), Cents(200), Missing),
            row("COM", Cents(300), Cents(300), Missing),
            row("com", Cents(400), Cents(400), Missing),
            row(".com", Cents(500), Cents(500), Missing),
        ];
        let (kept, dropped) = clean(rows, &t);
        assert_eq!(kept["xn--mk1bu44c"].0.register, Some(200));
        assert_eq!(kept["com"].0.register, Some(400));
        assert_eq!(
            dropped,
            vec![
                ("닷컴".to_string(), DropReason::Duplicate),
                ("COM".to_string(), DropReason::Duplicate),
                (".com".to_string(), DropReason::Duplicate),
            ]
        );
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn private_suffixes_are_marked() {
        let t = tlds();
        let (kept, _) = clean(vec![row("us.com", Cents(100), Cents(100), Missing)], &t);
        assert_eq!(kept["us.com"].1, Suffix::Private);
    }

    #[test]
    fn dates_in_file_names() {
        let day = |y, m, d| time::days_from_civil(y, m, d) * time::MS_PER_DAY;
        assert_eq!(
            date_in_name("dynadot_2021-11-22_898d3b8980.json"),
            Some(day(2021, 11, 22))
        );
        assert_eq!(
            date_in_name("2023-11-19_1874e1e89d_cloudflare_tld_prices.csv"),
            Some(day(2023, 11, 19))
        );
        assert_eq!(date_in_name("tld-prices.json"), None);
        assert_eq!(date_in_name("x12023-11-19.json"), None);
        assert_eq!(date_in_name("2023-02-30.json"), None);
        assert_eq!(
            parse_day_or_instant("2024-01-07T15:15:23+09:00"),
            Some(1_704_608_123_000)
        );
    }
}
