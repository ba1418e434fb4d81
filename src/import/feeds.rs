//! One parser per feed format: bytes of a feed file -> raw rows with prices in cents.
//!
//! The parsers only read; every judgement (real TLD? offered? duplicate?) is made by
//! the shared rules in [`super`]. A file that is not the expected document at all is an
//! `Err` (the import stops); a single row of the wrong shape is a row marked
//! `malformed` (counted and dropped).
//!
//! Which field is taken for what, per feed (`docs/IMPORT.md` has the reasoning):
//!
//! | feed | register | renew | transfer | date |
//! |---|---|---|---|---|
//! | dynadot | `register_price` | `renew_price` | `transfer_price` | `updated` (epoch ms) |
//! | porkbun | `registration` | `renewal` | `transfer` | `dates.csv` |
//! | openprovider | `regular-price.create` (older: `non-member-price`) | `.renew` | `.transfer` | `meta.generated_at` |
//! | namecheap | `sale-price.create`, else `regular-price.create` | same rule, `renew` | same rule, `transfer` | `meta.generated_at` |
//! | nira | `regular-price.create` (older: flat `create`) | `renew` | `transfer` | `meta.generated_at` |
//! | route53 | `RegistrationPrice.Price` | `RenewalPrice.Price` | `TransferPrice.Price` | `dates.csv` or file name |
//! | cloudflare | `price` + `icann_fee` | `renewal` + `icann_fee` | (none in the feed) | `dates.csv` or file name |

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::Registrar;
use crate::price;
use crate::time;

/// One price as read from a feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    /// Absent or `null`.
    #[default]
    Missing,
    /// A readable price in cents (may be 0).
    Cents(u32),
    /// Present but unreadable: negative, not a number, more than 2 decimals.
    Bad,
}

/// One entry of a feed file, before any judgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRow {
    /// The name as the feed writes it (`닷컴`, `co.uk`, `.COM`).
    pub key: String,
    /// First-year price.
    pub register: Field,
    /// Renewal price.
    pub renew: Field,
    /// Transfer price.
    pub transfer: Field,
    /// The feed marks the name as a Handshake name.
    pub handshake: bool,
    /// ISO 4217 code of the prices as the feed states it (upper-cased; `USD` when the
    /// feed states none; `?` when the stated value is not a string).
    pub currency: String,
    /// The row's own date (ms since the epoch) when the feed dates rows one by one;
    /// otherwise the file's date applies.
    pub date_ms: Option<i64>,
    /// The entry is not of the expected shape.
    pub malformed: bool,
    /// The regular first-year price, when the source gives it beside a lower
    /// promotional `register` (Namecheap's regular price beside its sale price,
    /// Name.com's original price); `Missing` otherwise.
    pub regular_register: Field,
    /// The ICANN fee of a year, where the source states it apart.
    pub icann_fee: Field,
    /// Whether `register`, `renew` and `transfer` include `icann_fee` (the source's
    /// prices do, or the parser added it).
    pub icann_fee_included: bool,
    /// What a registration for `i + 2` years costs in all, where the source gives it
    /// (Namecheap's API durations).
    pub register_years: [Field; crate::source::MAX_YEARS - 1],
    /// The source marks the first-year price as a promotion (Dynadot's `onSale`), with or
    /// without its regular price.
    pub promotion: bool,
    /// A coupon the source publishes for the first year: its code and the first-year
    /// price with it (Porkbun's `coupons`).
    pub coupon: Option<(String, Field)>,
    /// The prices of the registrar's paid membership: register, renew, transfer
    /// (Openprovider's `member-price`).
    pub member: [Field; 3],
}

impl Default for RawRow {
    fn default() -> RawRow {
        RawRow {
            key: String::new(),
            register: Field::Missing,
            renew: Field::Missing,
            transfer: Field::Missing,
            handshake: false,
            currency: "USD".to_string(),
            date_ms: None,
            malformed: false,
            regular_register: Field::Missing,
            icann_fee: Field::Missing,
            icann_fee_included: false,
            register_years: [Field::Missing; crate::source::MAX_YEARS - 1],
            promotion: false,
            coupon: None,
            member: [Field::Missing; 3],
        }
    }
}

/// A parsed feed file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The date the file states for its data, ms since the epoch, if it states one.
    pub date_ms: Option<i64>,
    /// Every entry, in file order.
    pub rows: Vec<RawRow>,
}

/// How a feed folder's files map to registrars and versions.
#[derive(Debug)]
pub enum Layout {
    /// One registrar: a current file, and dated versions under `history/`.
    Single {
        /// The registrar whose prices the feed holds.
        registrar: Registrar,
        /// The current price list, relative to the folder.
        current: &'static str,
        /// Ending of the dated versions under `history/` (`.json`, `.csv`).
        history_ext: &'static str,
    },
    /// One registrar per file, named by the file (`gandi.net.csv`): every `.csv` file of
    /// the folder must be in the table, or the import stops.
    PerFile(&'static [(&'static str, Registrar)]),
    /// One registrar, one file per dated version in the folder itself
    /// (`glauca_2026-07-08.csv`, dated by its name); the latest version is the current
    /// price list.
    Versions {
        /// The registrar whose prices the feed holds.
        registrar: Registrar,
        /// Ending of the version files.
        ext: &'static str,
    },
}

/// A feed format and where its files are.
pub struct Feed {
    /// Folder name under the feeds directory.
    pub folder: &'static str,
    /// Which files hold which registrar's prices.
    pub layout: Layout,
    /// The parser.
    pub parse: fn(&[u8]) -> Result<Parsed, String>,
}

impl Feed {
    /// The feed read from a folder of that name.
    pub fn by_folder(folder: &str) -> Option<&'static Feed> {
        FEEDS.iter().find(|f| f.folder == folder)
    }

    /// Every registrar this feed format can hold.
    pub fn registrars(&self) -> Vec<Registrar> {
        match &self.layout {
            Layout::Single { registrar, .. } | Layout::Versions { registrar, .. } => {
                vec![*registrar]
            }
            Layout::PerFile(files) => files.iter().map(|(_, r)| *r).collect(),
        }
    }
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("folder", &self.folder)
            .field("layout", &self.layout)
            .finish()
    }
}

const fn registrar(key: &'static str, name: &'static str, homepage: &'static str) -> Registrar {
    Registrar {
        key,
        name,
        homepage,
    }
}

/// The registrars of `domainpricing/`, by file name (keys, names and home pages chosen
/// once; `docs/IMPORT.md` lists them).
pub static DOMAINPRICING: [(&str, Registrar); 11] = [
    (
        "101domain.com.csv",
        registrar("101domain", "101domain", "https://www.101domain.com"),
    ),
    (
        "dreamhost.com.csv",
        registrar("dreamhost", "DreamHost", "https://www.dreamhost.com"),
    ),
    (
        "gandi.net.csv",
        registrar("gandi", "Gandi", "https://www.gandi.net"),
    ),
    (
        "godaddy.com.csv",
        registrar("godaddy", "GoDaddy", "https://www.godaddy.com"),
    ),
    (
        "hostinger.com.csv",
        registrar("hostinger", "Hostinger", "https://www.hostinger.com"),
    ),
    (
        "hover.com.csv",
        registrar("hover", "Hover", "https://www.hover.com"),
    ),
    (
        "ionos.com.csv",
        registrar("ionos", "IONOS", "https://www.ionos.com"),
    ),
    (
        "name.com.csv",
        registrar("namecom", "Name.com", "https://www.name.com"),
    ),
    (
        "namesilo.com.csv",
        registrar("namesilo", "NameSilo", "https://www.namesilo.com"),
    ),
    (
        "sav.com.csv",
        registrar("sav", "Sav", "https://www.sav.com"),
    ),
    (
        "spaceship.com.csv",
        registrar("spaceship", "Spaceship", "https://www.spaceship.com"),
    ),
];

/// Every feed format the importer knows.
pub static FEEDS: [Feed; 9] = [
    Feed {
        folder: "dynadot",
        layout: Layout::Single {
            registrar: registrar("dynadot", "Dynadot", "https://www.dynadot.com"),
            current: "dynadot.json",
            history_ext: ".json",
        },
        parse: parse_dynadot,
    },
    Feed {
        folder: "porkbun",
        layout: Layout::Single {
            registrar: registrar("porkbun", "Porkbun", "https://porkbun.com"),
            current: "porkbun-pricing.json",
            history_ext: ".json",
        },
        parse: parse_porkbun,
    },
    Feed {
        folder: "openprovider",
        layout: Layout::Single {
            registrar: registrar(
                "openprovider",
                "Openprovider",
                "https://www.openprovider.com",
            ),
            current: "openprovider-prices.json",
            history_ext: ".json",
        },
        parse: parse_openprovider,
    },
    Feed {
        folder: "namecheap",
        layout: Layout::Single {
            registrar: registrar("namecheap", "Namecheap", "https://www.namecheap.com"),
            current: "namecheap-prices.json",
            history_ext: ".json",
        },
        parse: parse_namecheap,
    },
    Feed {
        folder: "nira",
        layout: Layout::Single {
            registrar: registrar("nira", "NIRA", "https://nira.org.ng"),
            current: "nira-prices.json",
            history_ext: ".json",
        },
        parse: parse_nira,
    },
    Feed {
        folder: "aws-route53",
        layout: Layout::Single {
            registrar: registrar(
                "route53",
                "Amazon Route 53",
                "https://aws.amazon.com/route53/",
            ),
            current: "tld-prices.json",
            history_ext: ".json",
        },
        parse: parse_route53,
    },
    Feed {
        folder: "cloudflare",
        layout: Layout::Single {
            registrar: registrar(
                "cloudflare",
                "Cloudflare",
                "https://www.cloudflare.com/products/registrar/",
            ),
            current: "cloudflare_tld_prices.csv",
            history_ext: ".csv",
        },
        parse: parse_cloudflare,
    },
    Feed {
        folder: "domainpricing",
        layout: Layout::PerFile(&DOMAINPRICING),
        parse: parse_domainpricing,
    },
    Feed {
        folder: "glauca",
        layout: Layout::Versions {
            registrar: registrar("glauca", "Glauca Digital", "https://glauca.digital"),
            ext: ".csv",
        },
        parse: parse_glauca,
    },
];

/// A JSON object read as its entries in file order, duplicates included (a plain map
/// would keep only the last of two equal keys, dropping a row silently).
#[derive(Debug, Default)]
pub struct Entries(pub Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Entries, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of TLD entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

fn json<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not {what}: {e}"))
}

/// A price given as a JSON number or string.
pub fn field(value: Option<&Value>) -> Field {
    match value {
        None | Some(Value::Null) => Field::Missing,
        Some(Value::Number(n)) => decimal_field(&n.to_string()),
        Some(Value::String(s)) => decimal_field(s),
        Some(_) => Field::Bad,
    }
}

/// A decimal string, with or without thousands separators (`"2,060.23"`). Empty is
/// missing. More than two decimals are rounded to the cent, ties to even
/// ([`price::parse_cents_rounded`]).
pub fn decimal_field(s: &str) -> Field {
    let s = s.trim();
    if s.is_empty() {
        return Field::Missing;
    }
    let plain;
    let s = if s.contains(',') {
        match strip_grouping(s) {
            Some(p) => {
                plain = p;
                plain.as_str()
            }
            None => return Field::Bad,
        }
    } else {
        s
    };
    match price::parse_cents_rounded(s) {
        Ok(Some(c)) => Field::Cents(c),
        Ok(None) => Field::Missing,
        Err(_) => Field::Bad,
    }
}

/// `2,060.23` -> `2060.23`; `None` unless the commas group the whole part by three
/// (`20,60.23` and `1,2` are not prices).
fn strip_grouping(s: &str) -> Option<String> {
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let mut groups = whole.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut out = first.to_string();
    for g in groups {
        if g.len() != 3 || !g.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        out.push_str(g);
    }
    if let Some(f) = frac {
        if f.contains(',') {
            return None;
        }
        out.push('.');
        out.push_str(f);
    }
    Some(out)
}

/// `meta.generated_at` as ms; an unreadable value is an error, an absent one `None`.
fn generated_at(meta: Option<&Value>) -> Result<Option<i64>, String> {
    match meta.and_then(|m| m.get("generated_at")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => time::parse_rfc3339(s)
            .map(Some)
            .ok_or_else(|| format!("meta.generated_at {s:?} is not RFC 3339")),
        Some(other) => Err(format!("meta.generated_at {other} is not RFC 3339")),
    }
}

/// The currency a currency member states: `USD` when there is none, `?` when it is
/// not a string.
fn currency(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "USD".to_string(),
        Some(Value::String(s)) => s.trim().to_ascii_uppercase(),
        Some(_) => "?".to_string(),
    }
}

fn malformed(key: String) -> RawRow {
    RawRow {
        key,
        malformed: true,
        ..RawRow::default()
    }
}

/// Dynadot (`@7c/domain-prices`): `{"registrar", "updated": epoch ms, "prices": {key:
/// {register_price, renew_price, transfer_price, currency?, ...}}}`.
pub fn parse_dynadot(bytes: &[u8]) -> Result<Parsed, String> {
    #[derive(Deserialize)]
    struct Doc {
        updated: Option<Value>,
        prices: Entries,
    }
    let doc: Doc = json(
        bytes,
        "a Dynadot price list ({\"updated\", \"prices\": {...}})",
    )?;
    let date_ms = match doc.updated {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_i64()
                .ok_or_else(|| format!("\"updated\" {n} is not epoch milliseconds"))?,
        ),
        Some(other) => return Err(format!("\"updated\" {other} is not epoch milliseconds")),
    };
    let rows = doc
        .prices
        .0
        .into_iter()
        .map(|(key, v)| {
            if !v.is_object() {
                return malformed(key);
            }
            RawRow {
                register: field(v.get("register_price")),
                renew: field(v.get("renew_price")),
                transfer: field(v.get("transfer_price")),
                currency: currency(v.get("currency")),
                key,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed { date_ms, rows })
}

/// Porkbun `pricing/get`: `{"status": "SUCCESS", "pricing": {key: {registration,
/// renewal, transfer, coupons, specialType?}}}`, prices as strings.
pub fn parse_porkbun(bytes: &[u8]) -> Result<Parsed, String> {
    #[derive(Deserialize)]
    struct Doc {
        status: Option<String>,
        pricing: Entries,
    }
    let doc: Doc = json(
        bytes,
        "a Porkbun pricing response ({\"status\", \"pricing\": {...}})",
    )?;
    if let Some(status) = &doc.status
        && status != "SUCCESS"
    {
        return Err(format!("API status is {status:?}, not \"SUCCESS\""));
    }
    let rows = doc
        .pricing
        .0
        .into_iter()
        .map(|(key, v)| {
            if !v.is_object() {
                return malformed(key);
            }
            let register = field(v.get("registration"));
            RawRow {
                coupon: porkbun_coupon(register, v.get("coupons")),
                register,
                renew: field(v.get("renewal")),
                transfer: field(v.get("transfer")),
                handshake: v.get("specialType").and_then(Value::as_str) == Some("handshake"),
                key,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// A Porkbun entry's first-year coupon: `coupons` is `[]` when there is none, or an
/// object by operation, `{"registration": {"code", "max_per_user", "first_year_only",
/// "type": "amount", "amount": 1}}` (`amount` in dollars off). Only a registration
/// coupon of type `amount` that leaves a price above zero is kept, with the first-year
/// price it gives; any other coupon stays in the raw version only.
fn porkbun_coupon(register: Field, coupons: Option<&Value>) -> Option<(String, Field)> {
    let c = coupons?.get("registration")?;
    let code = c.get("code")?.as_str()?.trim();
    if c.get("type").and_then(Value::as_str) != Some("amount") {
        return None;
    }
    match (register, field(c.get("amount"))) {
        (Field::Cents(r), Field::Cents(off)) if off > 0 && off < r => {
            Some((code.to_string(), Field::Cents(r - off)))
        }
        _ => None,
    }
}

#[derive(Deserialize)]
struct MetaData {
    meta: Option<Value>,
    data: Entries,
}

const META_DATA: &str = "a registrar-pricelist file ({\"meta\", \"data\": {...}})";

/// Openprovider (`registrar-pricelist`): `{"meta": {generated_at}, "data": {key:
/// {"regular-price" (older: "non-member-price"): {create, renew, transfer, ...},
/// "member-price": {...}}}}`.
pub fn parse_openprovider(bytes: &[u8]) -> Result<Parsed, String> {
    let doc: MetaData = json(bytes, META_DATA)?;
    let date_ms = generated_at(doc.meta.as_ref())?;
    let rows = doc
        .data
        .0
        .into_iter()
        .map(|(key, v)| {
            let Some(p) = v
                .get("regular-price")
                .or_else(|| v.get("non-member-price"))
                .filter(|p| p.is_object())
            else {
                return malformed(key);
            };
            // What members of Openprovider's paid membership pay, beside the price for
            // everyone (kept apart, never ranked).
            let member =
                v.get("member-price")
                    .filter(|m| m.is_object())
                    .map_or([Field::Missing; 3], |m| {
                        ["create", "renew", "transfer"].map(|op| match field(m.get(op)) {
                            Field::Cents(0) => Field::Missing,
                            f => f,
                        })
                    });
            RawRow {
                register: field(p.get("create")),
                renew: field(p.get("renew")),
                transfer: field(p.get("transfer")),
                member,
                key,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed { date_ms, rows })
}

/// Namecheap (`registrar-pricelist`, from `users.getPricing`): `{"meta": {generated_at,
/// currency}, "data": {key: {"regular-price": {...}, "sale-price": {...}}}}`.
pub fn parse_namecheap(bytes: &[u8]) -> Result<Parsed, String> {
    let doc: MetaData = json(bytes, META_DATA)?;
    let date_ms = generated_at(doc.meta.as_ref())?;
    let currency = currency(doc.meta.as_ref().and_then(|m| m.get("currency")));
    let rows = doc
        .data
        .0
        .into_iter()
        .map(|(key, v)| {
            let regular = v.get("regular-price").filter(|p| p.is_object());
            let sale = v.get("sale-price").filter(|p| p.is_object());
            if regular.is_none() && sale.is_none() {
                return malformed(key);
            }
            // The sale price is what namecheap.com charges anyone today (no code needed);
            // the regular price is the list price it falls back to.
            let pick = |action: &str| {
                let s = sale.and_then(|p| p.get(action)).filter(|x| !x.is_null());
                field(s.or_else(|| regular.and_then(|p| p.get(action))))
            };
            let register = pick("create");
            // The regular first-year price, kept apart when the sale price is below it.
            let list = field(regular.and_then(|p| p.get("create")));
            let regular_register = match (register, list) {
                (Field::Cents(r), Field::Cents(l)) if r > 0 && l > r => list,
                _ => Field::Missing,
            };
            RawRow {
                register,
                renew: pick("renew"),
                transfer: pick("transfer"),
                currency: currency.clone(),
                key,
                regular_register,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed { date_ms, rows })
}

/// NIRA (`registrar-pricelist`, NGN list converted to USD): `{"meta": {generated_at,
/// data_currency?}, "data": {key: {"regular-price": {create, renew, transfer?}}}}`; the
/// oldest versions have `{create, renew}` directly under the key.
pub fn parse_nira(bytes: &[u8]) -> Result<Parsed, String> {
    let doc: MetaData = json(bytes, META_DATA)?;
    let date_ms = generated_at(doc.meta.as_ref())?;
    let currency = currency(doc.meta.as_ref().and_then(|m| m.get("data_currency")));
    let rows = doc
        .data
        .0
        .into_iter()
        .map(|(key, v)| {
            let p = v.get("regular-price").unwrap_or(&v);
            if !p.is_object() {
                return malformed(key);
            }
            RawRow {
                register: field(p.get("create")),
                renew: field(p.get("renew")),
                transfer: field(p.get("transfer")),
                currency: currency.clone(),
                key,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed { date_ms, rows })
}

/// Amazon Route 53 Domains `ListPrices` (AWS SDK v3 output): `{"$metadata", "Prices":
/// [{Name, RegistrationPrice: {Price, Currency}, RenewalPrice, TransferPrice, ...}]}`.
pub fn parse_route53(bytes: &[u8]) -> Result<Parsed, String> {
    #[derive(Deserialize)]
    struct Doc {
        #[serde(rename = "Prices")]
        prices: Vec<Value>,
    }
    let doc: Doc = json(
        bytes,
        "a Route 53 ListPrices response ({\"Prices\": [...]})",
    )?;
    let rows = doc
        .prices
        .into_iter()
        .map(|v| {
            let Some(key) = v.get("Name").and_then(Value::as_str) else {
                return malformed(String::new());
            };
            let price = |member: &str| v.get(member).and_then(|p| p.get("Price"));
            // Every price object states its currency; a row mixing two is not one price list.
            let stated: Vec<String> = ["RegistrationPrice", "RenewalPrice", "TransferPrice"]
                .iter()
                .filter_map(|m| v.get(*m).map(|p| currency(p.get("Currency"))))
                .collect();
            let currency = match stated.first() {
                None => "USD".to_string(),
                Some(first) if stated.iter().all(|c| c == first) => first.clone(),
                Some(_) => "?".to_string(),
            };
            RawRow {
                key: key.to_string(),
                register: field(price("RegistrationPrice")),
                renew: field(price("RenewalPrice")),
                transfer: field(price("TransferPrice")),
                currency,
                ..RawRow::default()
            }
        })
        .collect();
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// Cloudflare Registrar (`cloudflare_tld_prices.csv`): `tld,price,renewal,icann_fee`.
/// The customer pays the price plus the ICANN fee, so both are summed; the feed has no
/// transfer price.
pub fn parse_cloudflare(bytes: &[u8]) -> Result<Parsed, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| format!("not a CSV file: {e}"))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let (Some(tld), Some(price), Some(renewal)) = (col("tld"), col("price"), col("renewal")) else {
        return Err(format!(
            "not a Cloudflare price list: header is {:?}, expected tld,price,renewal,icann_fee",
            headers.iter().collect::<Vec<_>>()
        ));
    };
    let fee_col = col("icann_fee");
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("not a CSV file: {e}"))?;
        let key = record.get(tld).unwrap_or("").to_string();
        let (Some(p), Some(r)) = (record.get(price), record.get(renewal)) else {
            rows.push(malformed(key));
            continue;
        };
        let fee = fee_col
            .and_then(|c| record.get(c))
            .map_or(Field::Missing, decimal_field);
        let with_fee = |base: Field| match (base, fee) {
            (Field::Cents(b), Field::Cents(f)) if b > 0 => {
                b.checked_add(f).map_or(Field::Bad, Field::Cents)
            }
            (Field::Cents(_), Field::Bad) => Field::Bad,
            (base, _) => base,
        };
        rows.push(RawRow {
            key,
            register: with_fee(decimal_field(p)),
            renew: with_fee(decimal_field(r)),
            icann_fee: match fee {
                Field::Cents(0) => Field::Missing,
                f => f,
            },
            icann_fee_included: matches!(fee, Field::Cents(f) if f > 0),
            ..RawRow::default()
        });
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// A CSV reader over a feed file, its header, and the positions of `columns` in it.
/// An empty file, or a header without one of the columns, is not this feed's document.
fn csv_table<'a>(
    bytes: &'a [u8],
    columns: &[&str],
    what: &str,
) -> Result<(csv::Reader<&'a [u8]>, Vec<usize>), String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "empty file, expected {what} ({})",
            columns.join(",")
        ));
    }
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| format!("not a CSV file: {e}"))?
        .clone();
    let position = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim().trim_start_matches('\u{feff}') == name)
    };
    let found: Option<Vec<usize>> = columns.iter().map(|c| position(c)).collect();
    let positions = found.ok_or_else(|| {
        format!(
            "not {what}: header is {:?}, expected {}",
            headers.iter().collect::<Vec<_>>(),
            columns.join(",")
        )
    })?;
    Ok((reader, positions))
}

/// The records of a CSV feed (blank lines skipped); an unreadable record stops the
/// import, and a file with a header but no rows is refused: a price list with no prices
/// is a broken capture, not a registrar that sells nothing.
fn csv_records(mut reader: csv::Reader<&[u8]>) -> Result<Vec<csv::StringRecord>, String> {
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("not a CSV file: {e}"))?;
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        out.push(record);
    }
    if out.is_empty() {
        return Err("no price rows (only a header)".into());
    }
    Ok(out)
}

/// `kyle2910/domainpricing` (`<registrar domain>.csv`): `tld,registration,renewal`, one
/// year in USD, no transfer price, no date (dated by `dates.csv`). The registrar is the
/// file's name ([`DOMAINPRICING`]).
pub fn parse_domainpricing(bytes: &[u8]) -> Result<Parsed, String> {
    let (reader, c) = csv_table(
        bytes,
        &["tld", "registration", "renewal"],
        "a domainpricing price list",
    )?;
    let rows = csv_records(reader)?
        .iter()
        .map(|record| {
            let key = record.get(c[0]).unwrap_or("").to_string();
            match (record.get(c[1]), record.get(c[2])) {
                (Some(register), Some(renew)) => RawRow {
                    key,
                    register: decimal_field(register),
                    renew: decimal_field(renew),
                    ..RawRow::default()
                },
                _ => malformed(key),
            }
        })
        .collect();
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// Glauca Digital (`glauca_YYYY-MM-DD.csv`, from its registrar software's fixed zone
/// prices): `date,tld,currency,register,renew,transfer,restore`, prices in the row's
/// currency (GBP), each row dated. `restore` is not used.
pub fn parse_glauca(bytes: &[u8]) -> Result<Parsed, String> {
    let (reader, c) = csv_table(
        bytes,
        &["date", "tld", "currency", "register", "renew", "transfer"],
        "a Glauca price list",
    )?;
    let rows = csv_records(reader)?
        .iter()
        .map(|record| {
            let get = |i: usize| record.get(c[i]);
            let key = get(1).unwrap_or("").to_string();
            let date = get(0).and_then(|d| time::parse_date(d.trim()));
            match (date, get(2), get(3), get(4), get(5)) {
                (Some(day), Some(currency), Some(register), Some(renew), Some(transfer)) => {
                    let currency = currency.trim().to_ascii_uppercase();
                    RawRow {
                        key,
                        register: decimal_field(register),
                        renew: decimal_field(renew),
                        transfer: decimal_field(transfer),
                        currency: if currency.is_empty() {
                            "?".into()
                        } else {
                            currency
                        },
                        date_ms: Some(day * time::MS_PER_DAY),
                        ..RawRow::default()
                    }
                }
                _ => malformed(key),
            }
        })
        .collect();
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Field::{Bad, Cents, Missing};

    #[test]
    fn prices_from_numbers_and_strings() {
        let v: Value = serde_json::json!({"a": 10.88, "b": 25, "c": "2,060.23", "d": "0.00", "e": null,
            "f": -1, "g": 1.999, "h": "12,34.00", "i": true, "j": "", "k": 1e25, "l": "1,000,000"});
        let f = |k: &str| field(v.get(k));
        assert_eq!(f("a"), Cents(1088));
        assert_eq!(f("b"), Cents(2500));
        assert_eq!(f("c"), Cents(206_023));
        assert_eq!(f("d"), Cents(0));
        assert_eq!(f("e"), Missing);
        assert_eq!(f("missing"), Missing);
        assert_eq!(f("f"), Bad);
        assert_eq!(f("g"), Cents(200)); // 1.999 rounds half-even to 2.00
        assert_eq!(f("h"), Bad);
        assert_eq!(f("i"), Bad);
        assert_eq!(f("j"), Missing);
        assert_eq!(f("k"), Bad);
        assert_eq!(f("l"), Cents(100_000_000));
    }

    #[test]
    fn no_input_panics_any_parser() {
        let deep = "[".repeat(10_000);
        let inputs: Vec<&[u8]> = vec![
            b"",
            b"null",
            b"{}",
            b"[]",
            b"\xff\xfe\x00garbage",
            deep.as_bytes(),
            br#"{"prices": null, "pricing": null, "data": null, "Prices": null}"#,
            br#"{"updated": "x", "prices": {"com": null, "": 1, "a..b": {"register_price": [1]}}}"#,
            br#"{"updated": 1e400, "prices": {}}"#,
            br#"{"updated": -99999999999999999, "prices": {"com": {"register_price": 1e308}}}"#,
            br#"{"status": "SUCCESS", "pricing": {"com": {"registration": "9,99,9.00", "renewal": {}}}}"#,
            br#"{"meta": {"generated_at": 5}, "data": {"com": {"regular-price": 3, "sale-price": []}}}"#,
            br#"{"meta": [], "data": {"com": {"create": "-1", "renew": "1.001"}}}"#,
            br#"{"Prices": [null, 1, {"Name": 5}, {"Name": "com", "RenewalPrice": {"Price": "x", "Currency": 7}}]}"#,
            b"tld,price,renewal,icann_fee\n\"unterminated,1,1,1\n",
            b"tld,price,renewal\ncom,42949672.95,1,\n,,,,,,\n",
            b"tld,price,renewal,icann_fee\ncom,42949672.95,1,0.01\n",
            b"tld,registration,renewal\n",
            b"tld,registration,renewal\ncom,1\n,,\ncom,-1,x\n",
            b"date,tld,currency,register,renew,transfer,restore\n2020-01-01,com,GBP,42949672.94,1,1,1\nx,com,,1,1,1,1\n1999-01-01,com,GBP,1,1,1,1\n",
        ];
        let tlds = super::super::tlds::TldList::from_texts("com\n", "com\n");
        let rates =
            super::super::fx::Rates::parse(b"Date,USD,GBP,\n2020-01-01,1.1,0.9,\n").unwrap();
        let ctx = super::super::Context {
            tlds: &tlds,
            rates: &rates,
        };
        for feed in &FEEDS {
            for input in &inputs {
                if let Ok(parsed) = (feed.parse)(input) {
                    let _ = super::super::clean(parsed.rows, 0, &ctx);
                }
            }
        }
    }

    #[test]
    fn duplicate_json_keys_are_all_read() {
        let p = parse_dynadot(br#"{"updated": 1, "prices": {"com": {"register_price": 1}, "com": {"register_price": 2}}}"#)
            .unwrap();
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.rows[1].register, Cents(200));
        assert_eq!(p.date_ms, Some(1));
    }

    #[test]
    fn wrong_documents_are_errors() {
        assert!(parse_dynadot(b"").is_err());
        assert!(parse_dynadot(b"[1,2]").is_err());
        assert!(parse_porkbun(br#"{"status":"ERROR","pricing":{}}"#).is_err());
        assert!(parse_openprovider(br#"{"meta":{"generated_at":"yesterday"},"data":{}}"#).is_err());
        assert!(parse_route53(br#"{"prices": []}"#).is_err());
        assert!(parse_cloudflare(b"name,cost\ncom,1\n").is_err());
    }

    #[test]
    fn cloudflare_adds_the_icann_fee_but_not_to_zero() {
        let p = parse_cloudflare(b"tld,price,renewal,icann_fee\ncom,9.59,9.59,0.18\nco.uk,4.94,4.94,0\nx,0,5,0.18\ny,1\n").unwrap();
        assert_eq!(
            (p.rows[0].register, p.rows[0].renew, p.rows[0].transfer),
            (Cents(977), Cents(977), Missing)
        );
        assert_eq!(p.rows[1].register, Cents(494));
        assert_eq!(
            (p.rows[2].register, p.rows[2].renew),
            (Cents(0), Cents(518))
        );
        assert!(p.rows[3].malformed);
        // The fee is kept as a term, included in the prices; none where it is 0.
        assert_eq!(
            (p.rows[0].icann_fee, p.rows[0].icann_fee_included),
            (Cents(18), true)
        );
        assert_eq!(
            (p.rows[1].icann_fee, p.rows[1].icann_fee_included),
            (Missing, false)
        );
    }

    #[test]
    fn namecheap_prefers_the_sale_price() {
        let p = parse_namecheap(
            br#"{"meta":{"generated_at":"2025-10-25T06:18:28.882Z","currency":"USD"},"data":{
            "com":{"regular-price":{"create":14.98,"renew":18.48,"transfer":14.98},"sale-price":{"create":11.28,"renew":18.48,"transfer":null}}}}"#,
        )
        .unwrap();
        let r = &p.rows[0];
        assert_eq!(
            (r.register, r.renew, r.transfer),
            (Cents(1128), Cents(1848), Cents(1498))
        );
        // The regular first-year price is kept beside the sale price.
        assert_eq!(r.regular_register, Cents(1498));
        assert_eq!(p.date_ms, Some(1_761_373_108_882));
    }

    #[test]
    fn domainpricing_rows_and_refusals() {
        // CRLF, no final newline, a short row, a price with four decimals.
        let p = parse_domainpricing(
            b"tld,registration,renewal\r\ncom,9.08,10.18\r\nme,26.9913,27.99\r\nx,1\r\nbad,-1,abc",
        )
        .unwrap();
        assert_eq!(p.rows.len(), 4);
        assert_eq!(
            (p.rows[0].register, p.rows[0].renew, p.rows[0].transfer),
            (Cents(908), Cents(1018), Missing)
        );
        assert_eq!(p.rows[1].register, Cents(2699));
        assert!(p.rows[2].malformed);
        assert_eq!((p.rows[3].register, p.rows[3].renew), (Bad, Bad));
        assert_eq!(p.rows[0].currency, "USD");
        assert!(
            parse_domainpricing(b"")
                .unwrap_err()
                .starts_with("empty file")
        );
        assert_eq!(
            parse_domainpricing(b"tld,registration,renewal\n").unwrap_err(),
            "no price rows (only a header)"
        );
        assert!(parse_domainpricing(b"tld,price\ncom,1\n").is_err());
    }

    #[test]
    fn glauca_rows_carry_currency_and_date() {
        let p = parse_glauca(b"date,tld,currency,register,renew,transfer,restore\n2026-07-08,co.uk,GBP,9.17,9.17,0.00,\n2026-07-08,eu,gbp,8.33,8.33,8.33,0.00\nsoon,ch,GBP,1,1,1,1\n2026-07-08,li,,1,1,1,1\n").unwrap();
        let r = &p.rows[0];
        assert_eq!(
            (r.register, r.renew, r.transfer, r.currency.as_str()),
            (Cents(917), Cents(917), Cents(0), "GBP")
        );
        assert_eq!(r.date_ms, Some(1_783_468_800_000));
        assert_eq!(p.rows[1].currency, "GBP");
        assert!(p.rows[2].malformed);
        assert_eq!(p.rows[3].currency, "?");
        assert!(parse_glauca(b"tld,register\nch,1\n").is_err());
    }

    #[test]
    fn nira_reads_both_shapes() {
        let p = parse_nira(br#"{"meta":{"generated_at":"2025-09-29T07:49:47.387Z"},"data":{"ng":{"create":10.08,"renew":10.08},"com.ng":{"regular-price":{"create":4.45,"renew":4.45,"transfer":4.45}},"x":3}}"#).unwrap();
        assert_eq!(
            (p.rows[0].register, p.rows[0].transfer),
            (Cents(1008), Missing)
        );
        assert_eq!(p.rows[1].transfer, Cents(445));
        assert!(p.rows[2].malformed);
    }
}
