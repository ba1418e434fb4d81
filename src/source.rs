//! The canonical price source: a directory of CSV files, validated row by row.
//!
//! This is what `tldsnap build --input DIR` reads and what `tldsnap import` and the
//! synthetic generator write (docs/IMPORT.md):
//!
//! | file | columns |
//! |---|---|
//! | `registrars.csv` | `key,name,homepage` |
//! | `prices.csv` | `tld,registrar,register,renew,transfer,currency,updated_at`, optionally `original_currency,original_register,original_renew,original_transfer,rate_date` and `regular_register,icann_fee,icann_fee_included,register_years,promotion,coupon_code,coupon_register,member_register,member_renew,member_transfer` |
//! | `history.csv` (optional) | `date,tld,registrar,register,renew,transfer` |
//! | `tlds.csv` (optional) | `tld,type,manager`: the IANA root zone list with each TLD's type and manager |
//! | `rates.csv` (optional) | `currency,per_eur,date`: the ECB euro reference rates of the data date, which answers in other currencies are converted at |
//!
//! Reading never stops at the first bad row: every problem is collected as
//! `file:line: what is wrong` (up to [`MAX_REPORTED_ERRORS`]), and the whole source is
//! refused if there is any, so a build never publishes a snapshot made of half the input.

use std::collections::HashSet;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::price::{self, PriceError};
use crate::time;
use crate::tld;

/// The columns of `registrars.csv`, in the order writers emit them.
pub const REGISTRARS_COLUMNS: [&str; 3] = ["key", "name", "homepage"];
/// The columns of `prices.csv`, in the order writers emit them.
pub const PRICES_COLUMNS: [&str; 7] = [
    "tld",
    "registrar",
    "register",
    "renew",
    "transfer",
    "currency",
    "updated_at",
];
/// Optional columns of `prices.csv`, after the required ones: a price the registrar
/// quoted in another currency, as quoted (`GBP`, `9.17`, ...), and the day of the
/// reference rate it was converted to USD at. All empty for a price quoted in USD; a
/// source without these columns reads as all-USD.
pub const PRICES_ORIGINAL_COLUMNS: [&str; 5] = [
    "original_currency",
    "original_register",
    "original_renew",
    "original_transfer",
    "rate_date",
];
/// Optional columns of `prices.csv`, after the original-currency ones: what the
/// registrar's list says beside the three prices. `regular_register`: the regular
/// first-year price when `register` is a promotion below it (empty otherwise);
/// `icann_fee`: the ICANN fee of a year where the list states it apart, and
/// `icann_fee_included` (`true` or `false`, given exactly when `icann_fee` is): whether
/// the row's prices include it; `register_years`: what registering for 2 to 10 years at
/// once costs in all, where the list gives it (`2:21.76 3:32.34`, years ascending);
/// `promotion` (`true` or `false`; empty reads as whether `regular_register` is given):
/// the list marks the first-year price as a promotion, always with `regular_register`
/// and also where the list marks a sale without its regular price; `coupon_code` and
/// `coupon_register`: a code the registrar publishes and the first-year price with it
/// (below `register`); `member_register`, `member_renew`, `member_transfer`: the prices
/// of the registrar's paid membership, where its list gives them (each given only where
/// the row has that price). USD, like the prices.
pub const PRICES_TERMS_COLUMNS: [&str; 10] = [
    "regular_register",
    "icann_fee",
    "icann_fee_included",
    "register_years",
    "promotion",
    "coupon_code",
    "coupon_register",
    "member_register",
    "member_renew",
    "member_transfer",
];
/// Most years one registration may be bought for (ICANN's limit).
pub const MAX_YEARS: usize = 10;
/// Every optional column of `prices.csv`, in the order writers emit them.
const PRICES_OPTIONAL_COLUMNS: [&str; 15] = [
    PRICES_ORIGINAL_COLUMNS[0],
    PRICES_ORIGINAL_COLUMNS[1],
    PRICES_ORIGINAL_COLUMNS[2],
    PRICES_ORIGINAL_COLUMNS[3],
    PRICES_ORIGINAL_COLUMNS[4],
    PRICES_TERMS_COLUMNS[0],
    PRICES_TERMS_COLUMNS[1],
    PRICES_TERMS_COLUMNS[2],
    PRICES_TERMS_COLUMNS[3],
    PRICES_TERMS_COLUMNS[4],
    PRICES_TERMS_COLUMNS[5],
    PRICES_TERMS_COLUMNS[6],
    PRICES_TERMS_COLUMNS[7],
    PRICES_TERMS_COLUMNS[8],
    PRICES_TERMS_COLUMNS[9],
];
/// The columns of `history.csv`, in the order writers emit them.
pub const HISTORY_COLUMNS: [&str; 6] =
    ["date", "tld", "registrar", "register", "renew", "transfer"];

/// The columns of `tlds.csv`, in the order writers emit them.
pub const TLDS_COLUMNS: [&str; 3] = ["tld", "type", "manager"];

/// The columns of `rates.csv`, in the order writers emit them.
pub const RATES_COLUMNS: [&str; 3] = ["currency", "per_eur", "date"];

/// How many bad rows are listed before the report says "and N more". Enough to fix a
/// systematic error in one pass, few enough to read.
pub const MAX_REPORTED_ERRORS: usize = 100;

/// One registrar of `registrars.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrarRow {
    /// Selector used in requests: `[a-z0-9][a-z0-9_-]{0,63}`.
    pub key: String,
    /// Display name.
    pub name: String,
    /// The registrar's own web site (may be empty).
    pub homepage: String,
}

/// One (tld, registrar) row of `prices.csv`, prices in cents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceRow {
    /// Canonical TLD (`xn--` form for IDNs).
    pub tld: String,
    /// Registrar key, known from `registrars.csv`.
    pub registrar: String,
    /// First-year registration price; `None` = the registrar does not sell the TLD new.
    pub register: Option<u32>,
    /// Renewal price; always present when `register` is.
    pub renew: Option<u32>,
    /// Transfer price; `None` = not published.
    pub transfer: Option<u32>,
    /// When the registrar published this price, milliseconds since the Unix epoch.
    pub updated_ms: i64,
    /// The prices as the registrar quoted them, when not in USD.
    pub original: Option<Original>,
    /// The promotion and ICANN fee terms of the registrar's list.
    pub terms: Terms,
}

/// What a registrar's list says of an offer beside its three prices (the optional
/// columns [`PRICES_TERMS_COLUMNS`]), in USD cents like the prices.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Terms {
    /// The regular first-year price, when the first-year price is a promotion below it.
    pub regular_register: Option<u32>,
    /// The ICANN fee of a year, where the list states it apart.
    pub icann_fee: Option<u32>,
    /// Whether the offer's prices include `icann_fee`.
    pub icann_fee_included: bool,
    /// What a registration for `i + 2` years costs in all (2 to [`MAX_YEARS`]), where
    /// the list gives it.
    pub register_years: [Option<u32>; MAX_YEARS - 1],
    /// The first-year price is a promotion (always so with `regular_register`).
    pub promotion: bool,
    /// A published coupon and the first-year price with it.
    pub coupon: Option<Coupon>,
    /// The prices of the registrar's paid membership: register, renew, transfer.
    pub member: [Option<u32>; 3],
}

/// A coupon code a registrar publishes in its price list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coupon {
    /// The code as published: 1 to 64 printable ASCII characters, no comma or quote.
    pub code: String,
    /// The first-year price with the code, in USD cents, below the register price.
    pub register: u32,
}

impl Coupon {
    /// Whether `code` can be a coupon code: 1 to 64 characters of `A-Z a-z 0-9 - _ .`.
    pub fn valid_code(code: &str) -> bool {
        (1..=64).contains(&code.len())
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    }
}

/// A price quoted in another currency and the reference rate it was converted at
/// (the optional columns [`PRICES_ORIGINAL_COLUMNS`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// ISO 4217 code: three capital letters, not `USD`.
    pub currency: String,
    /// First-year price in that currency's hundredths; present exactly when `register` is.
    pub register: Option<u32>,
    /// Renewal price, present exactly when `renew` is.
    pub renew: Option<u32>,
    /// Transfer price, present exactly when `transfer` is.
    pub transfer: Option<u32>,
    /// Day of the reference rate used, days since 1970-01-01.
    pub rate_date: i32,
}

/// One observed price change of `history.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    /// Day the change was first seen, days since 1970-01-01.
    pub date: i32,
    /// Canonical TLD.
    pub tld: String,
    /// Registrar key.
    pub registrar: String,
    /// Registration price from that day, if offered.
    pub register: Option<u32>,
    /// Renewal price from that day, if offered.
    pub renew: Option<u32>,
    /// Transfer price from that day, if offered.
    pub transfer: Option<u32>,
}

/// One TLD of `tlds.csv`: a name of the IANA root zone list, with what the IANA root
/// zone database says of it. Every one of them is in the catalogue, sold or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TldInfoRow {
    /// Canonical TLD.
    pub tld: String,
    /// The root zone database's type (`generic`, `country-code`, `sponsored`, ...);
    /// empty when unknown.
    pub kind: String,
    /// The TLD manager (the registry operator); empty when unknown.
    pub manager: String,
}

/// One reference rate of `rates.csv`: how many units of `currency` one euro bought on
/// `date`, as the ECB published it (an exact decimal, `mantissa / 10^scale`). Every row
/// has the same date, and `USD` and `EUR` (`1`) are among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRow {
    /// ISO 4217 code: three capital letters.
    pub currency: String,
    /// The rate's digits, without the decimal point.
    pub mantissa: u64,
    /// How many of them are decimals.
    pub scale: u32,
    /// Day of the rate, days since 1970-01-01.
    pub date: i32,
}

impl RateRow {
    /// Reads a rate as the ECB writes it (`1.1684`, `186.75`): at most 9 decimals, above
    /// zero, below 2^40 as digits.
    pub fn parse_rate(s: &str) -> Option<(u64, u32)> {
        let s = s.trim();
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(frac) || frac.len() > 9 {
            return None;
        }
        let mantissa: u64 = format!("{whole}{frac}").parse().ok()?;
        (mantissa > 0 && mantissa <= 1 << 40).then_some((mantissa, frac.len() as u32))
    }

    /// The rate as the ECB writes it (`1.1684`).
    pub fn decimal(&self) -> String {
        let digits = format!(
            "{:0>width$}",
            self.mantissa,
            width = self.scale as usize + 1
        );
        let (whole, frac) = digits.split_at(digits.len() - self.scale as usize);
        if frac.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{frac}")
        }
    }
}

/// A whole, valid price source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// Every registrar, in file order.
    pub registrars: Vec<RegistrarRow>,
    /// Every price row, in file order.
    pub prices: Vec<PriceRow>,
    /// Every history row, in file order (empty without `history.csv`).
    pub history: Vec<HistoryRow>,
    /// Every TLD of the IANA list, in file order (empty without `tlds.csv`).
    pub tlds: Vec<TldInfoRow>,
    /// The reference rates answers in other currencies use, in file order (empty
    /// without `rates.csv`: then every answer is in USD).
    pub rates: Vec<RateRow>,
}

/// One bad row: where it is and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// File name (`prices.csv`).
    pub file: String,
    /// 1-based line number in that file.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Why a price source was refused.
#[derive(Debug)]
pub enum SourceError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// One or more rows are bad; nothing of the source is used.
    Rows {
        /// The first [`MAX_REPORTED_ERRORS`] problems.
        errors: Vec<RowError>,
        /// How many problems there were in all.
        total: usize,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            SourceError::Rows { errors, total } => {
                writeln!(f, "price source refused: {total} bad row(s)")?;
                for e in errors {
                    writeln!(f, "  {e}")?;
                }
                if *total > errors.len() {
                    writeln!(f, "  ... and {} more", total - errors.len())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SourceError {}

/// Reads and validates `registrars.csv`, `prices.csv` and, if present, `history.csv`
/// from `dir`.
pub fn read_dir(dir: &Path) -> Result<Source, SourceError> {
    let open = |name: &str| {
        let path = dir.join(name);
        std::fs::File::open(&path).map_err(|source| SourceError::Io { path, source })
    };
    let registrars = open("registrars.csv")?;
    let prices = open("prices.csv")?;
    let optional = |name: &str| match open(name) {
        Ok(f) => Ok(Some(f)),
        Err(SourceError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    };
    let history = optional("history.csv")?;
    let tlds = optional("tlds.csv")?;
    let rates = optional(RATES_FILE)?;
    let mut source = read_all(registrars, prices, history, tlds)?;
    if let Some(rates) = rates {
        source.rates = read_rates(rates)?;
    }
    Ok(source)
}

/// The file name of the reference rates in a price source directory.
pub const RATES_FILE: &str = "rates.csv";

/// Reads and validates `rates.csv`: one row per currency, one date for all, `USD`
/// among them and `EUR` at `1` (the ECB's base).
pub fn read_rates<R: Read>(input: R) -> Result<Vec<RateRow>, SourceError> {
    let mut errs = Errors::default();
    let mut rows: Vec<RateRow> = Vec::new();
    let file = RATES_FILE;
    if let Some(mut table) = Table::new(file, input, &RATES_COLUMNS, &mut errs) {
        let mut seen = HashSet::new();
        table.rows(&mut errs, |line, f, errs| {
            let currency = f[0].trim();
            if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
                return errs.push(
                    file,
                    line,
                    format!("currency {currency:?} is not an ISO 4217 code"),
                );
            }
            if !seen.insert(currency.to_string()) {
                return errs.push(file, line, format!("currency {currency} is listed twice"));
            }
            let Some((mantissa, scale)) = RateRow::parse_rate(f[1]) else {
                return errs.push(
                    file,
                    line,
                    format!(
                        "rate {:?} is not a decimal above zero with at most 9 decimals",
                        f[1]
                    ),
                );
            };
            let Some(date) = time::parse_date(f[2].trim()) else {
                return errs.push(file, line, format!("date {:?} is not YYYY-MM-DD", f[2]));
            };
            if let Some(first) = rows.first()
                && i64::from(first.date) != date
            {
                return errs.push(file, line, "every rate must have the same date");
            }
            if currency == "EUR" && (mantissa, scale) != (1, 0) {
                return errs.push(file, line, "EUR must be 1: the rates are units per euro");
            }
            rows.push(RateRow {
                currency: currency.to_string(),
                mantissa,
                scale,
                date: date as i32,
            });
        });
        if errs.total == 0 && !rows.is_empty() {
            for needed in ["USD", "EUR"] {
                if !rows.iter().any(|r| r.currency == needed) {
                    errs.push(file, 1, format!("no {needed} rate"));
                }
            }
        }
    }
    errs.finish().map(|()| rows)
}

/// Reads and validates a price source from three readers (tests, the embedded default).
pub fn read<R: Read>(registrars: R, prices: R, history: Option<R>) -> Result<Source, SourceError> {
    read_all(registrars, prices, history, None)
}

/// Reads and validates a price source from its four readers; `history` and `tlds` are
/// optional files.
pub fn read_all<R: Read>(
    registrars: R,
    prices: R,
    history: Option<R>,
    tlds: Option<R>,
) -> Result<Source, SourceError> {
    let mut errs = Errors::default();
    let mut source = Source::default();
    // A registrars.csv that cannot be read at all names no registrar: checking the
    // other files' rows against it would report every row of theirs as an unknown
    // registrar, burying the one error that matters. Their rows are checked for all
    // the rest.
    let read = read_registrars(registrars, &mut source, &mut errs);
    let keys: HashSet<String> = source.registrars.iter().map(|r| r.key.clone()).collect();
    let keys = read.then_some(&keys);
    read_prices(prices, keys, &mut source, &mut errs);
    if let Some(h) = history {
        read_history(h, keys, &mut source, &mut errs);
    }
    if let Some(t) = tlds {
        read_tlds(t, &mut source, &mut errs);
    }
    errs.finish().map(|()| source)
}

#[derive(Default)]
struct Errors {
    list: Vec<RowError>,
    total: usize,
}

impl Errors {
    fn push(&mut self, file: &str, line: u64, message: impl Into<String>) {
        self.total += 1;
        if self.list.len() < MAX_REPORTED_ERRORS {
            self.list.push(RowError {
                file: file.to_string(),
                line,
                message: message.into(),
            });
        }
    }

    fn finish(self) -> Result<(), SourceError> {
        if self.total == 0 {
            Ok(())
        } else {
            Err(SourceError::Rows {
                errors: self.list,
                total: self.total,
            })
        }
    }
}

/// A CSV file with named columns: maps each required column to its position, and each
/// optional one to its position if the header has it.
struct Table<R: Read> {
    file: &'static str,
    reader: csv::Reader<R>,
    columns: Vec<usize>,
    optional: Vec<Option<usize>>,
}

impl<R: Read> Table<R> {
    /// Opens the table and checks that every column of `required` is in the header.
    fn new(file: &'static str, input: R, required: &[&str], errs: &mut Errors) -> Option<Self> {
        Self::with_optional(file, input, required, &[], errs)
    }

    /// Like [`Table::new`], also locating the `optional` columns a header may have.
    fn with_optional(
        file: &'static str,
        input: R,
        required: &[&str],
        optional: &[&str],
        errs: &mut Errors,
    ) -> Option<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(input);
        let header = match reader.headers() {
            Ok(h) => h.clone(),
            Err(e) => {
                errs.push(file, 1, format!("unreadable header: {}", csv_message(&e)));
                return None;
            }
        };
        let mut columns = Vec::with_capacity(required.len());
        let mut missing = Vec::new();
        for name in required {
            match header
                .iter()
                .position(|h| h.trim().trim_start_matches('\u{feff}') == *name)
            {
                Some(i) => columns.push(i),
                None => missing.push(*name),
            }
        }
        if !missing.is_empty() {
            errs.push(
                file,
                1,
                format!(
                    "header lacks column(s) {} (expected {})",
                    missing.join(", "),
                    required.join(",")
                ),
            );
            return None;
        }
        let optional = optional
            .iter()
            .map(|name| {
                header
                    .iter()
                    .position(|h| h.trim().trim_start_matches('\u{feff}') == *name)
            })
            .collect();
        Some(Table {
            file,
            reader,
            columns,
            optional,
        })
    }

    /// Calls `row` with each record's line and its fields: the required ones in
    /// `required` order, then the optional ones in `optional` order (empty when the
    /// header lacks the column).
    fn rows(&mut self, errs: &mut Errors, mut row: impl FnMut(u64, &[&str], &mut Errors)) {
        let mut record = csv::StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line());
                    errs.push(self.file, line, csv_message(&e));
                    if !matches!(e.kind(), csv::ErrorKind::Utf8 { .. }) {
                        break; // the reader cannot resynchronise after an I/O error
                    }
                    continue;
                }
            }
            let line = record.position().map_or(0, |p| p.line());
            if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
                continue; // a blank line
            }
            let mut fields: Vec<&str> =
                Vec::with_capacity(self.columns.len() + self.optional.len());
            for &i in &self.columns {
                match record.get(i) {
                    Some(f) => fields.push(f),
                    None => break,
                }
            }
            for i in &self.optional {
                match i {
                    None => fields.push(""),
                    Some(i) => match record.get(*i) {
                        Some(f) => fields.push(f),
                        None => break,
                    },
                }
            }
            if fields.len() != self.columns.len() + self.optional.len() {
                errs.push(
                    self.file,
                    line,
                    format!("{} field(s), the header has more", record.len()),
                );
                continue;
            }
            row(line, &fields, errs);
        }
    }
}

fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
        csv::ErrorKind::Io(io) => format!("read error: {io}"),
        _ => e.to_string(),
    }
}

/// Whether `key` is a registrar key: `[a-z0-9][a-z0-9_-]{0,63}` (docs/IMPORT.md).
pub fn is_registrar_key(key: &str) -> bool {
    registrar_key_shape(key, false)
}

/// The one registrar-key check: [`is_registrar_key`], or with `any_case` the same in any
/// letter case (a key as a request may send it, before it is lowercased).
#[inline]
pub fn registrar_key_shape(key: &str, any_case: bool) -> bool {
    let letter = |c: u8| c.is_ascii_lowercase() || (any_case && c.is_ascii_uppercase());
    let b = key.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (letter(b[0]) || b[0].is_ascii_digit())
        && b.iter()
            .all(|&c| letter(c) || c.is_ascii_digit() || c == b'_' || c == b'-')
}

/// Reads registrars.csv into `source`; false when the file cannot be read as a table
/// at all (its header is unreadable or lacks a column).
fn read_registrars<R: Read>(input: R, source: &mut Source, errs: &mut Errors) -> bool {
    let file = "registrars.csv";
    let Some(mut table) = Table::new(file, input, &REGISTRARS_COLUMNS, errs) else {
        return false;
    };
    let mut seen = HashSet::new();
    table.rows(errs, |line, f, errs| {
        let (key, name, homepage) = (f[0].trim(), f[1].trim(), f[2].trim());
        if !is_registrar_key(key) {
            return errs.push(
                file,
                line,
                format!("registrar key {key:?} must match [a-z0-9][a-z0-9_-]{{0,63}}"),
            );
        }
        if name.is_empty() {
            return errs.push(file, line, format!("registrar {key:?} has an empty name"));
        }
        if !seen.insert(key.to_string()) {
            return errs.push(file, line, format!("duplicate registrar key {key:?}"));
        }
        source.registrars.push(RegistrarRow {
            key: key.into(),
            name: name.into(),
            homepage: homepage.into(),
        });
    });
    true
}

fn price_field(what: &str, raw: &str) -> Result<Option<u32>, String> {
    price::parse_cents(raw).map_err(|e| match e {
        PriceError::NotANumber => format!("{what} price {raw:?} is not a decimal number"),
        other => format!("{what} price {raw:?}: {other}"),
    })
}

fn canonical_tld(raw: &str) -> Result<String, String> {
    tld::normalize(raw)
        .map(|t| t.into_owned())
        .map_err(|e| format!("malformed TLD {raw:?}: {e}"))
}

/// `raw` as a registrar key of `keys` (`None`: registrars.csv could not be read, so
/// nothing is checked against it).
fn known_registrar(keys: Option<&HashSet<String>>, raw: &str) -> Result<String, String> {
    let key = raw.trim();
    if keys.is_none_or(|keys| keys.contains(key)) {
        Ok(key.to_string())
    } else {
        Err(format!("unknown registrar {key:?} (not in registrars.csv)"))
    }
}

/// Collects every problem of one row instead of stopping at the first.
fn collect<T>(problems: &mut Vec<String>, r: Result<T, String>) -> Option<T> {
    r.map_err(|e| problems.push(e)).ok()
}

fn read_prices<R: Read>(
    input: R,
    keys: Option<&HashSet<String>>,
    source: &mut Source,
    errs: &mut Errors,
) {
    let file = "prices.csv";
    let Some(mut table) =
        Table::with_optional(file, input, &PRICES_COLUMNS, &PRICES_OPTIONAL_COLUMNS, errs)
    else {
        return;
    };
    let mut seen = HashSet::new();
    table.rows(errs, |line, f, errs| {
        let mut p = Vec::new();
        let tld = collect(&mut p, canonical_tld(f[0]));
        let registrar = collect(&mut p, known_registrar(keys, f[1]));
        let register = collect(&mut p, price_field("register", f[2]));
        let renew = collect(&mut p, price_field("renew", f[3]));
        let transfer = collect(&mut p, price_field("transfer", f[4]));
        if f[5].trim() != "USD" {
            p.push(format!("currency {:?} is not USD", f[5]));
        }
        let updated = time::parse_rfc3339(f[6].trim());
        if updated.is_none() {
            p.push(format!(
                "updated_at {:?} is not an RFC 3339 timestamp",
                f[6]
            ));
        }
        if let (Some(Some(_)), Some(None)) = (register, renew) {
            p.push("a row with a register price needs a renew price".into());
        }
        if let (Some(None), Some(None)) = (register, renew) {
            p.push("no register and no renew price".into());
        }
        if let (Some(t), Some(r)) = (&tld, &registrar)
            && !seen.insert((t.clone(), r.clone()))
        {
            p.push(format!("duplicate row for ({t}, {r})"));
        }
        let usd = [register.flatten(), renew.flatten(), transfer.flatten()];
        let original = original(&f[7..12], usd, &mut p);
        let terms = terms(&f[12..22], usd, &mut p);
        if !p.is_empty() {
            return errs.push(file, line, p.join("; "));
        }
        source.prices.push(PriceRow {
            original,
            tld: tld.unwrap_or_default(),
            registrar: registrar.unwrap_or_default(),
            register: register.flatten(),
            renew: renew.flatten(),
            transfer: transfer.flatten(),
            updated_ms: updated.unwrap_or_default(),
            terms,
        });
    });
}

/// The optional terms of a price row (`f` in [`PRICES_TERMS_COLUMNS`] order), checked
/// against its first-year price.
fn terms(f: &[&str], usd: [Option<u32>; 3], p: &mut Vec<String>) -> Terms {
    let register = usd[0];
    let mut t = Terms::default();
    match price_field("regular_register", f[0]) {
        Err(e) => p.push(e),
        Ok(Some(regular)) if register.is_none_or(|r| regular <= r) => p.push(format!(
            "regular_register {:?} must be above the register price (a promotion's regular price)",
            f[0]
        )),
        Ok(regular) => t.regular_register = regular,
    }
    match price_field("icann_fee", f[1]) {
        Err(e) => p.push(e),
        Ok(fee) => t.icann_fee = fee,
    }
    match (t.icann_fee.is_some(), f[2].trim()) {
        (true, "true") => t.icann_fee_included = true,
        (true, "false") | (false, "") => {}
        (true, other) => p.push(format!("icann_fee_included {other:?} is not true or false")),
        (false, _) => p.push("icann_fee_included without icann_fee".into()),
    }
    let years = f[3].trim();
    if !years.is_empty() && register.is_none() {
        p.push("register_years without a register price".into());
    }
    let mut last = 1;
    for item in years.split_ascii_whitespace() {
        let parsed = item.split_once(':').and_then(|(n, price)| {
            let n: usize = n.parse().ok().filter(|n| (2..=MAX_YEARS).contains(n))?;
            Some((n, price_field("register_years", price).ok().flatten()?))
        });
        match parsed {
            Some((n, total)) if n > last => {
                t.register_years[n - 2] = Some(total);
                last = n;
            }
            _ => {
                p.push(format!(
                    "register_years {item:?} is not YEARS:PRICE with years 2 to {MAX_YEARS}, ascending"
                ));
                break;
            }
        }
    }
    match f[4].trim() {
        "true" => t.promotion = true,
        "" => t.promotion = t.regular_register.is_some(),
        "false" if t.regular_register.is_some() => {
            p.push("a row with regular_register is a promotion: promotion must be true".into())
        }
        "false" => {}
        other => p.push(format!("promotion {other:?} is not true or false")),
    }
    if t.promotion && register.is_none() {
        p.push("promotion without a register price".into());
    }
    let code = f[5].trim();
    match price_field("coupon_register", f[6]) {
        Err(e) => p.push(e),
        Ok(None) if code.is_empty() => {}
        Ok(Some(price)) if Coupon::valid_code(code) => match register {
            Some(r) if price < r => {
                t.coupon = Some(Coupon {
                    code: code.to_string(),
                    register: price,
                })
            }
            _ => p.push(format!(
                "coupon_register {:?} must be below the register price",
                f[6]
            )),
        },
        Ok(Some(_)) => p.push(format!(
            "coupon_code {code:?} is not 1 to 64 letters, digits, '-', '_' or '.'"
        )),
        Ok(None) => p.push("coupon_code without coupon_register".into()),
    }
    let names = ["register", "renew", "transfer"];
    for i in 0..3 {
        let what = format!("member_{}", names[i]);
        match price_field(&what, f[7 + i]) {
            Err(e) => p.push(e),
            Ok(Some(_)) if usd[i].is_none() => {
                p.push(format!("{what} without a {} price", names[i]))
            }
            Ok(price) => t.member[i] = price,
        }
    }
    t
}

/// The optional original-currency fields of a price row (`f` in
/// [`PRICES_ORIGINAL_COLUMNS`] order), checked against the row's USD prices.
fn original(f: &[&str], usd: [Option<u32>; 3], p: &mut Vec<String>) -> Option<Original> {
    let currency = f[0].trim();
    if currency.is_empty() {
        if f[1..].iter().any(|x| !x.trim().is_empty()) {
            p.push("original prices or rate_date without original_currency".into());
        }
        return None;
    }
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        p.push(format!(
            "original_currency {currency:?} is not a three-letter ISO 4217 code"
        ));
    } else if currency == "USD" {
        p.push("original_currency USD: a USD price has no original columns".into());
    }
    let names = ["register", "renew", "transfer"];
    let mut amounts = [None; 3];
    for i in 0..3 {
        let what = format!("original_{}", names[i]);
        match price_field(&what, f[i + 1]) {
            Err(e) => p.push(e),
            Ok(amount) if amount.is_some() != usd[i].is_some() => {
                p.push(format!("{what} must be given exactly when {} is", names[i]));
            }
            Ok(amount) => amounts[i] = amount,
        }
    }
    let rate_date = time::parse_date(f[4].trim()).and_then(|d| i32::try_from(d).ok());
    if rate_date.is_none() {
        p.push(format!("rate_date {:?} is not a YYYY-MM-DD date", f[4]));
    }
    Some(Original {
        currency: currency.to_string(),
        register: amounts[0],
        renew: amounts[1],
        transfer: amounts[2],
        rate_date: rate_date.unwrap_or_default(),
    })
}

fn read_history<R: Read>(
    input: R,
    keys: Option<&HashSet<String>>,
    source: &mut Source,
    errs: &mut Errors,
) {
    let file = "history.csv";
    let Some(mut table) = Table::new(file, input, &HISTORY_COLUMNS, errs) else {
        return;
    };
    let mut seen = HashSet::new();
    table.rows(errs, |line, f, errs| {
        let mut p = Vec::new();
        let date = time::parse_date(f[0].trim()).and_then(|d| i32::try_from(d).ok());
        if date.is_none() {
            p.push(format!("date {:?} is not a YYYY-MM-DD date", f[0]));
        }
        let tld = collect(&mut p, canonical_tld(f[1]));
        let registrar = collect(&mut p, known_registrar(keys, f[2]));
        let register = collect(&mut p, price_field("register", f[3]));
        let renew = collect(&mut p, price_field("renew", f[4]));
        let transfer = collect(&mut p, price_field("transfer", f[5]));
        if let (Some(d), Some(t), Some(r)) = (date, &tld, &registrar)
            && !seen.insert((d, t.clone(), r.clone()))
        {
            p.push(format!(
                "duplicate history row for ({}, {t}, {r})",
                f[0].trim()
            ));
        }
        if !p.is_empty() {
            return errs.push(file, line, p.join("; "));
        }
        source.history.push(HistoryRow {
            date: date.unwrap_or_default(),
            tld: tld.unwrap_or_default(),
            registrar: registrar.unwrap_or_default(),
            register: register.flatten(),
            renew: renew.flatten(),
            transfer: transfer.flatten(),
        });
    });
}

fn read_tlds<R: Read>(input: R, source: &mut Source, errs: &mut Errors) {
    let file = "tlds.csv";
    let Some(mut table) = Table::new(file, input, &TLDS_COLUMNS, errs) else {
        return;
    };
    let mut seen = HashSet::new();
    table.rows(errs, |line, f, errs| {
        let tld = match canonical_tld(f[0]) {
            Ok(t) => t,
            Err(e) => return errs.push(file, line, e),
        };
        if !seen.insert(tld.clone()) {
            return errs.push(file, line, format!("duplicate TLD {tld:?}"));
        }
        let kind = f[1].trim();
        if !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
            return errs.push(
                file,
                line,
                format!("type {kind:?} must be lowercase letters and '-'"),
            );
        }
        source.tlds.push(TldInfoRow {
            tld,
            kind: kind.to_string(),
            manager: f[2].trim().to_string(),
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRARS: &str = "key,name,homepage\nalpha,Alpha,https://a.example\nbravo,Bravo,\n";

    fn prices_err(body: &str) -> Vec<String> {
        let prices = format!("tld,registrar,register,renew,transfer,currency,updated_at\n{body}");
        match read(REGISTRARS.as_bytes(), prices.as_bytes(), None) {
            Ok(_) => vec![],
            Err(SourceError::Rows { errors, .. }) => {
                errors.iter().map(ToString::to_string).collect()
            }
            Err(e) => vec![e.to_string()],
        }
    }

    #[test]
    fn reads_a_good_source() {
        let prices = "tld,registrar,register,renew,transfer,currency,updated_at\n\
                      COM,alpha,9.99,12.99,,USD,2026-01-01T00:00:00Z\n\
                      рф,bravo,,5,0,USD,2026-01-01T00:00:00.5Z\n";
        let history = "date,tld,registrar,register,renew,transfer\n2025-01-01,com,alpha,8,9,\n";
        let s = read(
            REGISTRARS.as_bytes(),
            prices.as_bytes(),
            Some(history.as_bytes()),
        )
        .unwrap();
        assert_eq!(s.registrars.len(), 2);
        assert_eq!(s.prices[0].tld, "com");
        assert_eq!(s.prices[0].register, Some(999));
        assert_eq!(s.prices[0].transfer, None);
        assert_eq!(s.prices[1].tld, "xn--p1ai");
        assert_eq!(s.prices[1].register, None);
        assert_eq!(s.prices[1].transfer, Some(0));
        assert_eq!(s.history[0].register, Some(800));
    }

    #[test]
    fn an_unreadable_registrars_file_is_reported_once_not_against_every_price() {
        let prices = "tld,registrar,register,renew,transfer,currency,updated_at\n\
                      com,alpha,9.99,12.99,,USD,2026-01-01T00:00:00Z\n\
                      net,alpha,abc,12.99,,USD,2026-01-01T00:00:00Z\n";
        for registrars in [&b"\xff\xfe,x\n"[..], b"key,label\nalpha,Alpha\n"] {
            let Err(SourceError::Rows { errors, total }) =
                read(registrars, prices.as_bytes(), None)
            else {
                panic!("an unreadable registrars.csv was accepted");
            };
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            assert_eq!(total, 2, "{errors:?}");
            assert!(errors[0].starts_with("registrars.csv:1: "), "{errors:?}");
            // The prices file's own errors are still told.
            assert_eq!(
                errors[1],
                "prices.csv:3: register price \"abc\" is not a decimal number"
            );
        }
    }

    #[test]
    fn every_bad_row_kind_is_reported_with_its_line() {
        let errs = prices_err(
            "com,alpha,-1,2,,USD,2026-01-01T00:00:00Z\n\
             net,alpha,abc,2,,USD,2026-01-01T00:00:00Z\n\
             org,alpha,1.999,2,,USD,2026-01-01T00:00:00Z\n\
             io,zulu,1,2,,USD,2026-01-01T00:00:00Z\n\
             com,alpha,1,2,,USD,2026-01-01T00:00:00Z\n\
             me,alpha,1,2,,EUR,2026-01-01T00:00:00Z\n\
             a..b,alpha,1,2,,USD,2026-01-01T00:00:00Z\n\
             co,alpha,1,2,,USD,yesterday\n\
             ai,alpha,1,,,USD,2026-01-01T00:00:00Z\n",
        );
        let expect = [
            "prices.csv:2: register price \"-1\": negative price",
            "prices.csv:3: register price \"abc\" is not a decimal number",
            "prices.csv:4: register price \"1.999\": more than 2 decimals",
            "prices.csv:5: unknown registrar \"zulu\" (not in registrars.csv)",
            "prices.csv:6: duplicate row for (com, alpha)",
            "prices.csv:7: currency \"EUR\" is not USD",
            "prices.csv:8: malformed TLD \"a..b\": empty label (two dots in a row or a trailing dot)",
            "prices.csv:9: updated_at \"yesterday\" is not an RFC 3339 timestamp",
            "prices.csv:10: a row with a register price needs a renew price",
        ];
        assert_eq!(errs, expect);
    }

    #[test]
    fn original_currency_columns_are_optional_and_checked() {
        let head = "tld,registrar,register,renew,transfer,currency,updated_at,original_currency,original_register,original_renew,original_transfer,rate_date\n";
        let good = format!(
            "{head}uk,alpha,12.33,12.33,0.00,USD,2026-07-08T00:00:00Z,GBP,9.17,9.17,0.00,2026-04-13\n\
             com,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,,,,\n"
        );
        let s = read(REGISTRARS.as_bytes(), good.as_bytes(), None).unwrap();
        assert_eq!(
            s.prices[0].original,
            Some(Original {
                currency: "GBP".into(),
                register: Some(917),
                renew: Some(917),
                transfer: Some(0),
                rate_date: time::parse_date("2026-04-13").unwrap() as i32,
            })
        );
        assert_eq!(s.prices[1].original, None);
        let bad = format!(
            "{head}uk,alpha,12.33,12.33,,USD,2026-07-08T00:00:00Z,GBP,9.17,9.17,0.00,2026-04-31\n\
             ch,alpha,1,1,,USD,2026-07-08T00:00:00Z,usd,1,1,,2026-04-13\n\
             li,alpha,1,1,,USD,2026-07-08T00:00:00Z,,1,,,\n\
             is,alpha,1,1,,USD,2026-07-08T00:00:00Z,EUR,-1,1,,2026-04-13\n"
        );
        let Err(SourceError::Rows { errors, .. }) =
            read(REGISTRARS.as_bytes(), bad.as_bytes(), None)
        else {
            panic!("expected row errors")
        };
        let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "prices.csv:2: original_transfer must be given exactly when transfer is; rate_date \"2026-04-31\" is not a YYYY-MM-DD date",
                "prices.csv:3: original_currency \"usd\" is not a three-letter ISO 4217 code",
                "prices.csv:4: original prices or rate_date without original_currency",
                "prices.csv:5: original_register price \"-1\": negative price",
            ]
        );
    }

    #[test]
    fn terms_columns_are_optional_and_checked() {
        let head = "tld,registrar,register,renew,transfer,currency,updated_at,regular_register,icann_fee,icann_fee_included,register_years\n";
        let good = format!(
            "{head}com,alpha,11.28,18.48,14.98,USD,2025-10-25T00:00:00Z,14.98,0.18,false,2:21.76 10:105.80\n\
             net,alpha,9.77,9.77,,USD,2024-01-07T00:00:00Z,,0.18,true,\n\
             org,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,,,\n"
        );
        let s = read(REGISTRARS.as_bytes(), good.as_bytes(), None).unwrap();
        let terms: Vec<Terms> = s.prices.iter().map(|p| p.terms.clone()).collect();
        assert_eq!(
            terms,
            [
                Terms {
                    regular_register: Some(1498),
                    icann_fee: Some(18),
                    icann_fee_included: false,
                    register_years: {
                        let mut y = [None; MAX_YEARS - 1];
                        y[0] = Some(2176);
                        y[8] = Some(10580);
                        y
                    },
                    promotion: true,
                    ..Terms::default()
                },
                Terms {
                    regular_register: None,
                    icann_fee: Some(18),
                    icann_fee_included: true,
                    ..Terms::default()
                },
                Terms::default(),
            ]
        );
        let bad = format!(
            "{head}com,alpha,11.28,18.48,,USD,2025-10-25T00:00:00Z,11.28,,,\n\
             net,alpha,,9.77,,USD,2024-01-07T00:00:00Z,12.00,,,\n\
             org,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,0.18,,\n\
             io,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,,true,\n\
             ai,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,,,3:30.00 2:20.00\n\
             me,alpha,9.99,9.99,,USD,2026-07-08T00:00:00Z,,,,11:99.00\n"
        );
        let Err(SourceError::Rows { errors, .. }) =
            read(REGISTRARS.as_bytes(), bad.as_bytes(), None)
        else {
            panic!("expected row errors")
        };
        let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "prices.csv:2: regular_register \"11.28\" must be above the register price (a promotion's regular price)",
                "prices.csv:3: regular_register \"12.00\" must be above the register price (a promotion's regular price)",
                "prices.csv:4: icann_fee_included \"\" is not true or false",
                "prices.csv:5: icann_fee_included without icann_fee",
                "prices.csv:6: register_years \"2:20.00\" is not YEARS:PRICE with years 2 to 10, ascending",
                "prices.csv:7: register_years \"11:99.00\" is not YEARS:PRICE with years 2 to 10, ascending",
            ]
        );
    }

    #[test]
    fn duplicates_are_found_after_normalisation() {
        let errs = prices_err(
            "рф,alpha,1,2,,USD,2026-01-01T00:00:00Z\nxn--p1ai,alpha,1,2,,USD,2026-01-01T00:00:00Z\n",
        );
        assert_eq!(errs, ["prices.csv:3: duplicate row for (xn--p1ai, alpha)"]);
    }

    #[test]
    fn reports_are_capped_but_counted() {
        let body: String = (0..150)
            .map(|i| format!("t{i},alpha,x,1,,USD,2026-01-01T00:00:00Z\n"))
            .collect();
        let prices = format!("tld,registrar,register,renew,transfer,currency,updated_at\n{body}");
        let Err(SourceError::Rows { errors, total }) =
            read(REGISTRARS.as_bytes(), prices.as_bytes(), None)
        else {
            panic!("expected row errors")
        };
        assert_eq!((errors.len(), total), (MAX_REPORTED_ERRORS, 150));
    }

    #[test]
    fn bad_registrars_and_headers() {
        let regs = "key,name,homepage\nAlpha,A,\nok,,\nok2,x,\nok2,y,\n";
        let Err(SourceError::Rows { errors, .. }) = read(regs.as_bytes(), "tld\n".as_bytes(), None)
        else {
            panic!()
        };
        let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            got[0],
            "registrars.csv:2: registrar key \"Alpha\" must match [a-z0-9][a-z0-9_-]{0,63}"
        );
        assert_eq!(
            got[1],
            "registrars.csv:3: registrar \"ok\" has an empty name"
        );
        assert_eq!(got[2], "registrars.csv:5: duplicate registrar key \"ok2\"");
        assert!(
            got[3].starts_with("prices.csv:1: header lacks column(s) registrar, register"),
            "{}",
            got[3]
        );
    }

    #[test]
    fn bad_history_rows() {
        let prices = "tld,registrar,register,renew,transfer,currency,updated_at\n";
        let history = "date,tld,registrar,register,renew,transfer\n2025-02-30,com,alpha,1,1,1\n\
                       2025-01-01,com,nobody,1,1,1\n2025-01-01,com,alpha,1,1,1\n2025-01-01,COM,alpha,2,2,2\n";
        let Err(SourceError::Rows { errors, .. }) = read(
            REGISTRARS.as_bytes(),
            prices.as_bytes(),
            Some(history.as_bytes()),
        ) else {
            panic!()
        };
        let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "history.csv:2: date \"2025-02-30\" is not a YYYY-MM-DD date",
                "history.csv:3: unknown registrar \"nobody\" (not in registrars.csv)",
                "history.csv:5: duplicate history row for (2025-01-01, com, alpha)",
            ]
        );
    }

    #[test]
    fn short_rows_and_bad_utf8_are_row_errors() {
        let prices = b"tld,registrar,register,renew,transfer,currency,updated_at\ncom,alpha\nnet,alpha,1,1,1,USD,\xff\n";
        let Err(SourceError::Rows { errors, .. }) = read(REGISTRARS.as_bytes(), &prices[..], None)
        else {
            panic!()
        };
        assert_eq!(errors[0].line, 2);
        assert_eq!(errors[1].line, 3);
        assert_eq!(errors[1].message, "not valid UTF-8");
    }
}
