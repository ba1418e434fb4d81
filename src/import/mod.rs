//! Real registrar feeds -> the canonical price source (docs/IMPORT.md).
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
//!   refuses it).
//! - `transfer` 0 is a real free transfer (the `.uk` family); a missing transfer price
//!   stays empty.
//! - One row per (tld, registrar): when a feed lists one name twice (say its Unicode and
//!   its `xn--` key), the row whose key already was canonical wins, else the first in
//!   file order; the other is counted as [`DropReason::Duplicate`].
//! - Every dropped row is counted by reason in the per-feed [`FeedSummary`].
//!
//! A feed that cannot be read at all (not JSON, wrong shape, no date) fails the whole
//! import with `file: what`, and nothing is written.

pub mod collected;
pub mod feeds;
pub mod flags;
pub mod fx;
pub mod history;
pub mod report;
pub mod tlds;
pub mod write;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::time;
use crate::tld;
use feeds::{Feed, Field, Layout, RawRow};
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

/// What a source says of an offer beside its three prices (docs/IMPORT.md, "Terms").
pub use crate::source::Terms;

/// A row of `prices.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceRow {
    /// Canonical TLD.
    pub tld: String,
    /// Registrar key.
    pub registrar: &'static str,
    /// The prices, in USD.
    pub offer: Offer,
    /// The prices as the feed gave them, when it gave them in another currency.
    pub original: Option<Original>,
    /// The feed file's own date, milliseconds since the Unix epoch.
    pub updated_ms: i64,
    /// The promotion and ICANN fee terms the source states.
    pub terms: Terms,
}

/// A price quoted in another currency, as the feed gave it, and the rate used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// ISO 4217 code (`GBP`).
    pub currency: String,
    /// The prices in that currency's minor units (pence).
    pub offer: Offer,
    /// The price's own date (days since 1970-01-01).
    pub price_day: i64,
    /// The date of the reference rate used: the last table row on or before `price_day`.
    pub rate_day: i64,
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
    /// The reference rates of the data date (the newest price's day), by currency:
    /// what answers in other currencies are converted at.
    pub rates: Vec<crate::source::RateRow>,
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
    /// A price that is negative or not a number (or too large once converted).
    BadPrice,
    /// A price in a currency the reference rate table does not quote.
    UnknownCurrency,
    /// A price in another currency, dated before the rate table's first rate for it.
    BeforeRates,
    /// The row is not an object of the expected shape.
    MalformedRow,
    /// A second row for a name the feed already listed.
    Duplicate,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 11] = [
        DropReason::Handshake,
        DropReason::MalformedName,
        DropReason::NotInRootZone,
        DropReason::NotPublicSuffix,
        DropReason::NotOffered,
        DropReason::NoRenewal,
        DropReason::BadPrice,
        DropReason::UnknownCurrency,
        DropReason::BeforeRates,
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
            DropReason::UnknownCurrency => "currency without a reference rate",
            DropReason::BeforeRates => "dated before the rate table",
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
    /// Of the kept rows, how many were converted to USD, by original currency.
    pub converted: BTreeMap<String, usize>,
    /// First and last day of the rates used for those conversions.
    pub rate_days: Option<(i64, i64)>,
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
    /// One entry per registrar that was present, in registrar key order.
    pub feeds: Vec<FeedSummary>,
    /// Folders of the feeds directory that no importer reads.
    pub unknown_folders: Vec<String>,
    /// Rows for a person to look at (see [`flags`]); they change no price.
    pub flags: Vec<flags::Flagged>,
}

/// A kept row of one feed file.
#[derive(Debug, Clone)]
struct Kept {
    /// USD prices.
    offer: Offer,
    suffix: Suffix,
    /// The prices as the feed gave them, when not in USD.
    original: Option<Original>,
    /// The source's terms, in USD.
    terms: Terms,
}

/// A feed file's rows after cleaning, with its date.
struct Version {
    ms: i64,
    /// The feed's current file (it wins a tie with a history file of the same time).
    current: bool,
    /// File name, to order versions with the same timestamp.
    name: String,
    rows: BTreeMap<String, Kept>,
    dropped: Vec<(String, DropReason)>,
    read: usize,
}

/// One registrar's files inside a feed folder.
struct Unit {
    feed: &'static Feed,
    registrar: Registrar,
    /// The current price list, relative to the feeds directory.
    current: String,
    /// Older dated versions, relative to the feeds directory.
    history: Vec<String>,
    /// Versions collected from the registrar's API, oldest first (the newest is the
    /// current price list when there is one).
    collected: Vec<collected::Version>,
}

/// The conversion context of an import: the rate table.
pub struct Context<'a> {
    /// Real names.
    pub tlds: &'a TldList,
    /// Reference rates for prices not in USD.
    pub rates: &'a fx::Rates,
}

/// Imports every known feed folder under `feeds_dir`, checking names against
/// `ctx.tlds` and converting prices in other currencies with `ctx.rates`.
///
/// Reads `feeds_dir/dates.csv` when it exists to date the files that carry no date.
/// Fails on the first feed file that cannot be read at all; never writes anything.
pub fn import(feeds_dir: &Path, ctx: &Context<'_>) -> Result<Import, ImportError> {
    let meta =
        std::fs::metadata(feeds_dir).map_err(|e| ImportError::new(feeds_dir, e.to_string()))?;
    if !meta.is_dir() {
        return Err(ImportError::new(feeds_dir, "not a directory"));
    }
    let dates = Dates::load(&feeds_dir.join(DATES_FILE))?;
    let mut source = Source::default();
    let mut summaries = Vec::new();
    let mut unknown_folders = Vec::new();

    let folders = list(feeds_dir, true)?;
    for folder in &folders {
        if Feed::by_folder(folder).is_none() {
            unknown_folders.push(folder.clone());
        }
    }
    let mut units = Vec::new();
    for feed in feeds::FEEDS.iter() {
        if folders.iter().any(|d| d == feed.folder) {
            units.extend(units_of(feeds_dir, feed)?);
        }
    }
    units.sort_by_key(|u| u.registrar.key);
    for unit in &mut units {
        if let Some(shape) = collected::Shape::of(unit.registrar.key)
            && shape.folder == unit.feed.folder
        {
            unit.collected = shape
                .versions(feeds_dir)
                .map_err(|e| ImportError::new(&shape.collected_dir(feeds_dir), e))?;
        }
    }
    // Collected versions of a registrar whose feed file is missing would be skipped:
    // stop instead of dropping them silently.
    for shape in &collected::SHAPES {
        if units.iter().any(|u| u.registrar.key == shape.key) {
            continue;
        }
        let dir = shape.collected_dir(feeds_dir);
        let orphan = shape.versions(feeds_dir).is_ok_and(|v| !v.is_empty());
        if orphan {
            return Err(ImportError::new(
                &dir,
                format!(
                    "collected versions of {} without the feed they update ({}); restore that file",
                    shape.key,
                    shape
                        .feed_current()
                        .map_or_else(|| shape.folder.to_string(), |(rel, _)| rel)
                ),
            ));
        }
    }
    if units.is_empty() {
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

    let mut flagged = Vec::new();
    for unit in &units {
        let (summary, prices, history, unit_flags) = import_unit(feeds_dir, unit, ctx, &dates)?;
        source.registrars.push(unit.registrar);
        source.prices.extend(prices);
        source.history.extend(history);
        summaries.push(summary);
        flagged.extend(unit_flags);
    }
    source
        .prices
        .sort_by(|a, b| (a.tld.as_str(), a.registrar).cmp(&(b.tld.as_str(), b.registrar)));
    source.tlds = ctx.tlds.catalogue();
    source.history.sort_by(|a, b| {
        (a.tld.as_str(), a.registrar, a.day).cmp(&(b.tld.as_str(), b.registrar, b.day))
    });
    if let Some(newest) = source.prices.iter().map(|p| p.updated_ms).max() {
        source.rates = ctx.rates.rows_at(newest.div_euclid(time::MS_PER_DAY));
    }
    flagged.extend(flags::across_registrars(&source.prices));
    flags::sort(&mut flagged);
    Ok(Import {
        source,
        feeds: summaries,
        unknown_folders,
        flags: flagged,
    })
}

/// The names of the sub-directories (`dirs`) or files of `dir`, sorted, hidden ones
/// left out.
fn list(dir: &Path, dirs: bool) -> Result<Vec<String>, ImportError> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| ImportError::new(dir, e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| ImportError::new(dir, e.to_string()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir == dirs {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The registrars a feed folder holds, with their files (see [`feeds::Layout`]).
fn units_of(dir: &Path, feed: &'static Feed) -> Result<Vec<Unit>, ImportError> {
    let folder = dir.join(feed.folder);
    match &feed.layout {
        Layout::Single {
            registrar,
            current,
            history_ext,
        } => {
            let history_dir = folder.join("history");
            let history = if history_dir.is_dir() {
                list(&history_dir, false)?
                    .into_iter()
                    .filter(|n| n.ends_with(history_ext))
                    .map(|n| format!("{}/history/{n}", feed.folder))
                    .collect()
            } else {
                Vec::new()
            };
            Ok(vec![Unit {
                feed,
                registrar: *registrar,
                current: format!("{}/{current}", feed.folder),
                history,
                collected: Vec::new(),
            }])
        }
        Layout::PerFile(table) => {
            let mut units = Vec::new();
            for name in list(&folder, false)? {
                if !name.ends_with(".csv") {
                    continue; // PROVENANCE.txt, LICENSE
                }
                let Some((_, registrar)) = table.iter().find(|(file, _)| *file == name) else {
                    return Err(ImportError::new(
                        &folder.join(&name),
                        format!(
                            "no registrar is known for this file (known: {}); add its key, name and home page to feeds::{} and docs/IMPORT.md",
                            table.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", "),
                            feed.folder.to_uppercase()
                        ),
                    ));
                };
                units.push(Unit {
                    feed,
                    registrar: *registrar,
                    current: format!("{}/{name}", feed.folder),
                    history: Vec::new(),
                    collected: Vec::new(),
                });
            }
            Ok(units)
        }
        Layout::Versions { registrar, ext } => {
            let mut dated = Vec::new();
            for name in list(&folder, false)? {
                if !name.ends_with(ext) {
                    continue;
                }
                let day = date_in_name(&name).ok_or_else(|| {
                    ImportError::new(
                        &folder.join(&name),
                        "a version file needs its date in its name (name_YYYY-MM-DD.csv)",
                    )
                })?;
                dated.push((day, name));
            }
            dated.sort();
            let Some((_, latest)) = dated.pop() else {
                return Err(ImportError::new(
                    &folder,
                    format!("no dated version (*_YYYY-MM-DD{ext}) in the folder"),
                ));
            };
            Ok(vec![Unit {
                feed,
                registrar: *registrar,
                current: format!("{}/{latest}", feed.folder),
                history: dated
                    .into_iter()
                    .map(|(_, n)| format!("{}/{n}", feed.folder))
                    .collect(),
                collected: Vec::new(),
            }])
        }
    }
}

type UnitResult = (
    FeedSummary,
    Vec<PriceRow>,
    Vec<HistoryRow>,
    Vec<flags::Flagged>,
);

fn import_unit(
    dir: &Path,
    unit: &Unit,
    ctx: &Context<'_>,
    dates: &Dates,
) -> Result<UnitResult, ImportError> {
    let key = unit.registrar.key;
    let mut versions = Vec::with_capacity(unit.history.len() + unit.collected.len() + 1);
    for rel in &unit.history {
        versions.push(read_version(dir, rel, unit.feed.parse, None, ctx, dates)?);
    }
    // The newest collected version is the current price list; the feed's own file
    // becomes one more dated version.
    let (mut current, current_rel, seen_ms) = match unit.collected.split_last() {
        None => {
            // The collector may have found the feed's own list answered again.
            let name = unit.current.rsplit('/').next().unwrap_or(&unit.current);
            let seen = collected::Shape::of(key)
                .filter(|s| s.folder == unit.feed.folder)
                .and_then(|s| s.last_seen(dir).get(name).copied());
            (
                read_version(dir, &unit.current, unit.feed.parse, None, ctx, dates)?,
                unit.current.clone(),
                seen,
            )
        }
        Some((last, older)) => {
            versions.push(read_version(
                dir,
                &unit.current,
                unit.feed.parse,
                None,
                ctx,
                dates,
            )?);
            for v in older {
                versions.push(read_version(dir, &v.rel, v.parse, Some(v.ms), ctx, dates)?);
            }
            (
                read_version(dir, &last.rel, last.parse, Some(last.ms), ctx, dates)?,
                last.rel.clone(),
                Some(last.last_seen_ms),
            )
        }
    };
    current.current = true;
    // A price is as fresh as the last time its source answered it.
    let updated_ms = seen_ms.map_or(current.ms, |s| s.max(current.ms));

    let prices: Vec<PriceRow> = current
        .rows
        .iter()
        .map(|(name, kept)| PriceRow {
            tld: name.clone(),
            registrar: key,
            offer: kept.offer,
            original: kept.original.clone(),
            updated_ms,
            terms: kept.terms.clone(),
        })
        .collect();
    let kept = prices.len();
    let count = |f: &dyn Fn(&Kept) -> bool| current.rows.values().filter(|k| f(k)).count();
    let selling = count(&|k| k.offer.register.is_some());
    let mut converted: BTreeMap<String, usize> = BTreeMap::new();
    for k in current.rows.values() {
        if let Some(o) = &k.original {
            *converted.entry(o.currency.clone()).or_default() += 1;
        }
    }
    let rate_days = current
        .rows
        .values()
        .filter_map(|k| k.original.as_ref().map(|o| o.rate_day))
        .fold(None, |acc: Option<(i64, i64)>, d| {
            Some(acc.map_or((d, d), |(a, b)| (a.min(d), b.max(d))))
        });

    let mut summary = FeedSummary {
        registrar: key,
        file: current_rel,
        date_ms: current.ms,
        read: current.read,
        kept,
        selling,
        renewal_only: kept - selling,
        free_transfer: count(&|k| k.offer.transfer == Some(0)),
        no_transfer: count(&|k| k.offer.transfer.is_none()),
        private_suffix: count(&|k| k.suffix == Suffix::Private),
        converted,
        rate_days,
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
    let mut unit_flags = Vec::new();
    let states: Vec<flags::State> = versions
        .iter()
        .map(|v| flags::State {
            day: v.ms.div_euclid(time::MS_PER_DAY),
            rows: v
                .rows
                .iter()
                .map(|(k, kept)| {
                    let own = match &kept.original {
                        Some(o) => (o.offer, o.currency.clone()),
                        None => (kept.offer, "USD".to_string()),
                    };
                    (k.clone(), own)
                })
                .collect(),
        })
        .collect();
    unit_flags.extend(flags::moves(key, &states));
    for v in &versions {
        for (name, kept) in &v.rows {
            if let Some(o) = &kept.original {
                unit_flags.extend(flags::stale_rate(key, name, o.price_day, o.rate_day));
            }
        }
    }
    let days: Vec<history::Day> = versions
        .into_iter()
        .map(|v| history::Day {
            day: v.ms.div_euclid(time::MS_PER_DAY),
            rows: v
                .rows
                .into_iter()
                .map(|(k, kept)| (k, kept.offer))
                .collect(),
        })
        .collect();
    summary.version_days = (
        days.first().map_or(0, |d| d.day),
        days.last().map_or(0, |d| d.day),
    );
    let history = history::changes(key, days);
    summary.history_rows = history.len();
    Ok((summary, prices, history, unit_flags))
}

/// Reads, parses, dates and cleans one feed file.
fn read_version(
    dir: &Path,
    rel: &str,
    parse: collected::Parser,
    known_ms: Option<i64>,
    ctx: &Context<'_>,
    dates: &Dates,
) -> Result<Version, ImportError> {
    let path = dir.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| ImportError::new(&path, e.to_string()))?;
    let parsed = parse(&bytes).map_err(|what| ImportError::new(&path, what))?;
    let file_name = rel.rsplit('/').next().unwrap_or(rel);
    let ms = match known_ms
        .or(parsed.date_ms)
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
    let (rows, dropped) = clean(parsed.rows, ms.div_euclid(time::MS_PER_DAY), ctx);
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
type Cleaned = (BTreeMap<String, Kept>, Vec<(String, DropReason)>);

/// Applies the shared rules to one file's rows (see the module docs); `day` is the
/// file's date, the date of every row that carries none of its own.
fn clean(raw: Vec<RawRow>, day: i64, ctx: &Context<'_>) -> Cleaned {
    let mut dropped: Vec<(String, DropReason)> = Vec::new();
    // canonical name -> (kept row, key was canonical, feed key)
    let mut kept: HashMap<String, (Kept, bool, String)> = HashMap::new();
    for row in raw {
        match clean_row(&row, day, ctx) {
            Err(reason) => dropped.push((row.key, reason)),
            Ok((name, k)) => {
                let canonical_key = row.key == name;
                match kept.get_mut(&name) {
                    None => {
                        kept.insert(name, (k, canonical_key, row.key));
                    }
                    Some(existing) if canonical_key && !existing.1 => {
                        let loser = std::mem::replace(existing, (k, true, row.key));
                        dropped.push((loser.2, DropReason::Duplicate));
                    }
                    Some(_) => dropped.push((row.key, DropReason::Duplicate)),
                }
            }
        }
    }
    let rows = kept.into_iter().map(|(n, (k, _, _))| (n, k)).collect();
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

fn clean_row(row: &RawRow, file_day: i64, ctx: &Context<'_>) -> Result<(String, Kept), DropReason> {
    if row.malformed {
        return Err(DropReason::MalformedRow);
    }
    if row.handshake {
        return Err(DropReason::Handshake);
    }
    let name = tld::normalize(&row.key)
        .map_err(|_| DropReason::MalformedName)?
        .into_owned();
    let suffix = ctx.tlds.check(&name)?;
    let get = |f: &Field| match f {
        Field::Missing => Ok(None),
        Field::Cents(c) => Ok(Some(*c)),
        Field::Bad => Err(DropReason::BadPrice),
    };
    let register = get(&row.register)?.filter(|c| *c > 0);
    let renew = get(&row.renew)?.filter(|c| *c > 0);
    let transfer = get(&row.transfer)?;
    let own = match (register, renew) {
        (None, None) => return Err(DropReason::NotOffered),
        (Some(_), None) => return Err(DropReason::NoRenewal),
        _ => Offer {
            register,
            renew,
            transfer,
        },
    };
    if row.currency == "USD" {
        return Ok((
            name,
            Kept {
                offer: own,
                suffix,
                original: None,
                terms: terms_of(row, [register, renew, transfer], Ok)?,
            },
        ));
    }
    let price_day = row
        .date_ms
        .map_or(file_day, |ms| ms.div_euclid(time::MS_PER_DAY));
    let mut rate_day = price_day;
    let mut convert = |cents: Option<u32>| -> Result<Option<u32>, DropReason> {
        let Some(c) = cents else { return Ok(None) };
        match ctx.rates.to_usd(c, &row.currency, price_day) {
            Ok(conv) => {
                rate_day = conv.rate_day;
                Ok(Some(conv.cents))
            }
            Err(fx::FxError::UnknownCurrency) => Err(DropReason::UnknownCurrency),
            Err(fx::FxError::BeforeTable) => Err(DropReason::BeforeRates),
            Err(fx::FxError::TooLarge) => Err(DropReason::BadPrice),
        }
    };
    let usd = Offer {
        register: convert(own.register)?,
        renew: convert(own.renew)?,
        transfer: convert(own.transfer)?,
    };
    let terms = terms_of(row, [usd.register, usd.renew, usd.transfer], convert)?;
    Ok((
        name,
        Kept {
            offer: usd,
            terms,
            suffix,
            original: Some(Original {
                currency: row.currency.clone(),
                offer: own,
                price_day,
                rate_day,
            }),
        },
    ))
}

/// The terms of `row`, each amount through `convert` (to USD, as the prices were),
/// kept only beside the price they qualify (`usd`: register, renew, transfer, in USD);
/// a term that cannot be read is dropped and leaves the row's prices as they are.
fn terms_of(
    row: &RawRow,
    usd: [Option<u32>; 3],
    mut convert: impl FnMut(Option<u32>) -> Result<Option<u32>, DropReason>,
) -> Result<Terms, DropReason> {
    let register = usd[0];
    let read = |f: &Field| match f {
        Field::Cents(c) if *c > 0 => Some(*c),
        _ => None,
    };
    let fee = convert(read(&row.icann_fee))?;
    let mut register_years = [None; crate::source::MAX_YEARS - 1];
    for (total, f) in register_years.iter_mut().zip(&row.register_years) {
        *total = convert(read(f).filter(|_| register.is_some()))?;
    }
    let regular_register =
        convert(read(&row.regular_register))?.filter(|c| register.is_some_and(|r| *c > r));
    let coupon = match &row.coupon {
        Some((code, price)) if crate::source::Coupon::valid_code(code) => convert(read(price))?
            .filter(|c| register.is_some_and(|r| *c < r))
            .map(|c| crate::source::Coupon {
                code: code.clone(),
                register: c,
            }),
        _ => None,
    };
    let mut member = [None; 3];
    for i in 0..3 {
        member[i] = convert(read(&row.member[i]))?.filter(|_| usd[i].is_some());
    }
    Ok(Terms {
        promotion: register.is_some() && (row.promotion || regular_register.is_some()),
        regular_register,
        icann_fee: fee,
        icann_fee_included: fee.is_some() && row.icann_fee_included,
        register_years,
        coupon,
        member,
    })
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

    fn rates() -> fx::Rates {
        fx::Rates::parse(
            b"Date,USD,GBP,\n2026-04-13,1.1684,0.87058,\n2026-04-10,1.1711,0.87105,\n2020-05-20,1.0950,0.89693,\n",
        )
        .unwrap()
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
        let (t, r) = (tlds(), rates());
        let ctx = Context {
            tlds: &t,
            rates: &r,
        };
        let ok = |r: RawRow| clean_row(&r, 0, &ctx).map(|(n, k)| (n, k.offer));
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
        let mut xyz = row("xyz", Cents(100), Cents(100), Missing);
        xyz.currency = "XYZ".into();
        assert_eq!(ok(xyz), Err(DropReason::UnknownCurrency));
    }

    #[test]
    fn other_currencies_are_converted_at_the_rate_of_their_day() {
        let (t, r) = (tlds(), rates());
        let ctx = Context {
            tlds: &t,
            rates: &r,
        };
        let day = |s: &str| time::parse_date(s).unwrap();
        let gbp = |date: &str| {
            let mut x = row("uk", Cents(917), Cents(917), Cents(0));
            x.currency = "GBP".into();
            x.date_ms = Some(day(date) * time::MS_PER_DAY);
            x
        };
        // 2026-04-12 is a Sunday: the Friday rate. 917 * 1.1711 / 0.87105 = 1232.89.
        let (_, k) = clean_row(&gbp("2026-04-12"), 0, &ctx).unwrap();
        assert_eq!(
            k.offer,
            Offer {
                register: Some(1233),
                renew: Some(1233),
                transfer: Some(0)
            }
        );
        let o = k.original.unwrap();
        assert_eq!((o.currency.as_str(), o.offer.register), ("GBP", Some(917)));
        assert_eq!(
            (o.price_day, o.rate_day),
            (day("2026-04-12"), day("2026-04-10"))
        );
        // After the table: its last row.
        let (_, k) = clean_row(&gbp("2026-07-08"), 0, &ctx).unwrap();
        assert_eq!(k.original.unwrap().rate_day, day("2026-04-13"));
        // Before the table: dropped with that reason, never a price.
        assert_eq!(
            clean_row(&gbp("2020-05-19"), 0, &ctx).map(|_| ()),
            Err(DropReason::BeforeRates)
        );
        // A row without its own date takes the file's.
        let mut undated = gbp("2026-04-12");
        undated.date_ms = None;
        assert_eq!(
            clean_row(&undated, day("2020-01-01"), &ctx).map(|_| ()),
            Err(DropReason::BeforeRates)
        );
        let mut bad = gbp("2026-04-12");
        bad.register = Field::Bad;
        assert_eq!(
            clean_row(&bad, 0, &ctx).map(|_| ()),
            Err(DropReason::BadPrice)
        );
    }

    #[test]
    fn duplicates_keep_the_canonical_key() {
        let (t, r) = (tlds(), rates());
        let ctx = Context {
            tlds: &t,
            rates: &r,
        };
        let rows = vec![
            row("닷컴", Cents(100), Cents(100), Missing),
            row("xn--mk1bu44c", Cents(200), Cents(200), Missing),
            row("COM", Cents(300), Cents(300), Missing),
            row("com", Cents(400), Cents(400), Missing),
            row(".com", Cents(500), Cents(500), Missing),
        ];
        let (kept, dropped) = clean(rows, 0, &ctx);
        assert_eq!(kept["xn--mk1bu44c"].offer.register, Some(200));
        assert_eq!(kept["com"].offer.register, Some(400));
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
        let (t, r) = (tlds(), rates());
        let ctx = Context {
            tlds: &t,
            rates: &r,
        };
        let (kept, _) = clean(
            vec![row("us.com", Cents(100), Cents(100), Missing)],
            0,
            &ctx,
        );
        assert_eq!(kept["us.com"].suffix, Suffix::Private);
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
