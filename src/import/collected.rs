//! Collected versions: what `tldsnap collect` fetched from a registrar's own API, kept
//! unedited beside the registrar's feed, and the parsers of those API shapes.
//!
//! ```text
//! <feed folder>/collected/<key>_<YYYY-MM-DDTHH-MM-SSZ>.<json|xml>   one accepted version
//! <feed folder>/collected/<key>.provenance.jsonl                      one line per collection
//! <feed folder>/quarantine/<key>_<...>.<ext> (+ .report.txt)          versions the gate refused
//! ```
//!
//! The import reads every accepted version as a dated version of the registrar (its
//! instant is in its name); the newest is the registrar's current price list, and the
//! feed's own file becomes history. A paginated source's version is the JSON array of
//! its pages' bodies, each byte for byte as it was answered.
//!
//! | registrar | folder | shape | register | renew | transfer |
//! |---|---|---|---|---|---|
//! | porkbun | `porkbun` | `pricing/get` (as the feed) | `registration` | `renewal` | `transfer` |
//! | route53 | `aws-route53` | `ListPrices` pages | `RegistrationPrice.Price` | `RenewalPrice.Price` | `TransferPrice.Price` |
//! | namecheap | `namecheap` | `users.getPricing` XML | `REGISTER` 1 year `Price` | `RENEW` `Price` | `TRANSFER` `Price` |
//! | namesilo | `domainpricing` | `getPrices` JSON | `registration` | `renew` | `transfer` |
//! | dynadot | `dynadot` | REST `get_tld_price` pages | `allYearsRegisterPrice[0]` | `allYearsRenewPrice[0]` | `transferPrice` |
//! | namecom | `domainpricing` | `core/v1/tldpricing` pages | `registrationPrice` | `renewalPrice` | `transferInPrice` |
//! | openprovider | `openprovider` | `v1beta/tlds` pages | `create_price.product.price` | `renew_price.product.price` | `transfer_price.product.price` |

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::feeds::{self, Entries, Feed, Field, Layout, Parsed, RawRow};
use crate::time;

/// The sub-folder of a feed folder that holds accepted collected versions.
pub const COLLECTED_DIR: &str = "collected";
/// The sub-folder of a feed folder that holds versions the gate refused.
pub const QUARANTINE_DIR: &str = "quarantine";

/// A parser of one file's bytes.
pub type Parser = fn(&[u8]) -> Result<Parsed, String>;

/// Where a registrar's collected versions go and how they are read.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Registrar key.
    pub key: &'static str,
    /// Feed folder (under the feeds directory) the versions sit beside.
    pub folder: &'static str,
    /// File ending (`json`, `xml`).
    pub ext: &'static str,
    /// The parser of the API's answer.
    pub parse: Parser,
}

/// Every registrar whose API answers can be collected.
pub static SHAPES: [Shape; 7] = [
    Shape {
        key: "porkbun",
        folder: "porkbun",
        ext: "json",
        parse: feeds::parse_porkbun,
    },
    Shape {
        key: "route53",
        folder: "aws-route53",
        ext: "json",
        parse: parse_route53_pages,
    },
    Shape {
        key: "namecheap",
        folder: "namecheap",
        ext: "xml",
        parse: parse_namecheap_xml,
    },
    Shape {
        key: "namesilo",
        folder: "domainpricing",
        ext: "json",
        parse: parse_namesilo,
    },
    Shape {
        key: "dynadot",
        folder: "dynadot",
        ext: "json",
        parse: parse_dynadot_api,
    },
    Shape {
        key: "namecom",
        folder: "domainpricing",
        ext: "json",
        parse: parse_namecom,
    },
    Shape {
        key: "openprovider",
        folder: "openprovider",
        ext: "json",
        parse: parse_openprovider_api,
    },
];

impl Shape {
    /// The shape of registrar `key`.
    pub fn of(key: &str) -> Option<&'static Shape> {
        SHAPES.iter().find(|s| s.key == key)
    }

    /// `<feeds>/<folder>/collected`.
    pub fn collected_dir(&self, feeds_dir: &Path) -> PathBuf {
        feeds_dir.join(self.folder).join(COLLECTED_DIR)
    }

    /// `<feeds>/<folder>/quarantine`.
    pub fn quarantine_dir(&self, feeds_dir: &Path) -> PathBuf {
        feeds_dir.join(self.folder).join(QUARANTINE_DIR)
    }

    /// The file name of a version collected at `ms`: `<key>_2026-12-01T21-33-19Z.json`.
    pub fn file_name(&self, ms: i64) -> String {
        version_name(self.key, self.ext, ms)
    }

    /// The provenance log's file name.
    pub fn provenance_name(&self) -> String {
        format!("{}.provenance.jsonl", self.key)
    }

    /// The instant a version file's name states, if it is one of this registrar's.
    pub fn instant_of(&self, name: &str) -> Option<i64> {
        version_instant(self.key, self.ext, name)
    }

    /// The accepted versions in `<folder>/collected/`, oldest first, each with the
    /// last time the collector saw it again unchanged (from the provenance log).
    pub fn versions(&self, feeds_dir: &Path) -> Result<Vec<Version>, String> {
        let dir = self.collected_dir(feeds_dir);
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(ms) = self.instant_of(&name) {
                out.push(Version {
                    rel: format!("{}/{COLLECTED_DIR}/{name}", self.folder),
                    name,
                    ms,
                    last_seen_ms: ms,
                    parse: self.parse,
                });
            }
        }
        out.sort_by(|a, b| (a.ms, &a.name).cmp(&(b.ms, &b.name)));
        let seen = self.last_seen(feeds_dir);
        for v in &mut out {
            if let Some(at) = seen.get(&v.name) {
                v.last_seen_ms = v.last_seen_ms.max(*at);
            }
        }
        Ok(out)
    }

    /// From the provenance log: per version file name (a collected version, or the
    /// feed's own file when the source answered its list again), the latest time the
    /// collector fetched it.
    pub fn last_seen(&self, feeds_dir: &Path) -> std::collections::HashMap<String, i64> {
        let mut seen = std::collections::HashMap::new();
        let log = self.collected_dir(feeds_dir).join(self.provenance_name());
        let Ok(text) = std::fs::read_to_string(&log) else {
            return seen;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v.get("outcome").and_then(Value::as_str) == Some("quarantined") {
                continue;
            }
            let (Some(version), Some(at)) = (
                v.get("version").and_then(Value::as_str),
                v.get("fetched_at")
                    .and_then(Value::as_str)
                    .and_then(time::parse_rfc3339),
            ) else {
                continue;
            };
            let e = seen.entry(version.to_string()).or_insert(at);
            *e = (*e).max(at);
        }
        seen
    }

    /// The file and parser of the feed's own current price list for this registrar
    /// (relative to the feeds directory), if the feed has one.
    pub fn feed_current(&self) -> Option<(String, Parser)> {
        let feed: &Feed = feeds::FEEDS.iter().find(|f| f.folder == self.folder)?;
        match &feed.layout {
            Layout::Single { current, .. } => {
                Some((format!("{}/{current}", feed.folder), feed.parse))
            }
            Layout::PerFile(table) => table
                .iter()
                .find(|(_, r)| r.key == self.key)
                .map(|(file, _)| (format!("{}/{file}", feed.folder), feed.parse)),
            Layout::Versions { .. } => None,
        }
    }
}

/// The file name of collector `key`'s version collected at `ms`:
/// `<key>_2026-12-01T21-33-19Z.<ext>`.
pub fn version_name(key: &str, ext: &str, ms: i64) -> String {
    let iso = time::iso_millis(ms); // 2026-12-01T21:33:19.123Z
    let stamp = format!("{}Z", iso.get(..19).unwrap_or(&iso).replace(':', "-"));
    format!("{key}_{stamp}.{ext}")
}

/// The instant a version file's name states, if it is one of collector `key`'s.
pub fn version_instant(key: &str, ext: &str, name: &str) -> Option<i64> {
    let rest = name.strip_prefix(key)?.strip_prefix('_')?;
    let stamp = rest.strip_suffix(ext)?.strip_suffix('.')?;
    // 2026-12-01T21-33-19Z
    let b = stamp.as_bytes();
    if b.len() != 20 || b[10] != b'T' || b[19] != b'Z' || b[13] != b'-' || b[16] != b'-' {
        return None;
    }
    let iso = format!(
        "{}T{}:{}:{}Z",
        &stamp[..10],
        &stamp[11..13],
        &stamp[14..16],
        &stamp[17..19]
    );
    time::parse_rfc3339(&iso)
}

/// One accepted collected version.
#[derive(Debug, Clone)]
pub struct Version {
    /// Path relative to the feeds directory.
    pub rel: String,
    /// File name.
    pub name: String,
    /// When it was collected (ms since the epoch).
    pub ms: i64,
    /// When the collector last found the source answering exactly this list.
    pub last_seen_ms: i64,
    /// Its parser.
    pub parse: Parser,
}

fn json(bytes: &[u8], what: &str) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not {what}: {e}"))
}

/// A paginated version: the array of pages, or one page on its own.
fn pages(doc: Value) -> Vec<Value> {
    match doc {
        Value::Array(pages) => pages,
        page => vec![page],
    }
}

fn row(key: String, register: Field, renew: Field, transfer: Field, currency: String) -> RawRow {
    RawRow {
        key,
        register,
        renew,
        transfer,
        currency,
        ..RawRow::default()
    }
}

/// `list` as the regular first-year price beside `register`: when both are prices and
/// `list` is the higher (otherwise `register` is no promotion).
fn regular_beside(register: Field, list: Field) -> Field {
    match (register, list) {
        (Field::Cents(r), Field::Cents(l)) if r > 0 && l > r => list,
        _ => Field::Missing,
    }
}

fn upper(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "USD".to_string(),
        Some(Value::String(s)) => s.trim().to_ascii_uppercase(),
        Some(_) => "?".to_string(),
    }
}

/// Route 53 Domains `ListPrices` pages (`[{"Prices": [...], "NextPageMarker"}, ...]`),
/// or one page, or the SDK's output: the rows of every page in order.
pub fn parse_route53_pages(bytes: &[u8]) -> Result<Parsed, String> {
    let doc = json(bytes, "Route 53 ListPrices pages")?;
    let mut rows = Vec::new();
    for (i, page) in pages(doc).into_iter().enumerate() {
        if page.get("Prices").is_none() {
            return Err(format!("page {}: no \"Prices\" (an error answer?)", i + 1));
        }
        let text = serde_json::to_vec(&page).map_err(|e| e.to_string())?;
        rows.extend(feeds::parse_route53(&text)?.rows);
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// NameSilo `getPrices` (`type=json`): `{"request", "reply": {"code": 300, "detail":
/// "success", <tld>: {"registration", "transfer", "renew"}, ...}}`; a code other than
/// 300 is an error answer.
pub fn parse_namesilo(bytes: &[u8]) -> Result<Parsed, String> {
    #[derive(serde::Deserialize)]
    struct Doc {
        reply: Entries,
    }
    let doc: Doc = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a NameSilo getPrices answer ({{\"reply\": {{...}}}}): {e}"))?;
    let mut code = None;
    let mut detail = String::new();
    let mut rows = Vec::new();
    for (key, v) in doc.reply.0 {
        match key.as_str() {
            "code" => code = Some(v.to_string().trim_matches('"').to_string()),
            "detail" => detail = v.as_str().unwrap_or_default().to_string(),
            _ if v.is_object() => rows.push(row(
                key,
                feeds::field(v.get("registration")),
                feeds::field(v.get("renew")),
                feeds::field(v.get("transfer")),
                "USD".to_string(),
            )),
            _ => rows.push(RawRow {
                key,
                malformed: true,
                ..RawRow::default()
            }),
        }
    }
    if code.as_deref() != Some("300") {
        return Err(format!(
            "NameSilo reply code {} ({detail:?}), not 300 (success)",
            code.as_deref().unwrap_or("missing")
        ));
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// The first element of a per-year price array, or the value itself.
fn first_year(v: Option<&Value>) -> Field {
    match v {
        Some(Value::Array(a)) => feeds::field(a.first()),
        other => feeds::field(other),
    }
}

/// Dynadot REST `get_tld_price` pages: `{"code", "message", "data": {"tldPriceList":
/// [{"tld": ".com", "allYearsRegisterPrice": [...], "allYearsRenewPrice": [...],
/// "transferPrice", "restorePrice", "onSale", ...}]}}`. A page whose code is not 200 is
/// an error answer (Dynadot sends them with HTTP 200).
pub fn parse_dynadot_api(bytes: &[u8]) -> Result<Parsed, String> {
    let doc = json(bytes, "Dynadot get_tld_price pages")?;
    let mut rows = Vec::new();
    for (i, page) in pages(doc).into_iter().enumerate() {
        let code = page
            .get("code")
            .map(|c| c.to_string().trim_matches('"').to_string());
        if code.as_deref() != Some("200") {
            return Err(format!(
                "page {}: Dynadot code {} ({}), not 200",
                i + 1,
                code.as_deref().unwrap_or("missing"),
                page.get("message").and_then(Value::as_str).unwrap_or("")
            ));
        }
        let Some(list) = page.pointer("/data/tldPriceList").and_then(Value::as_array) else {
            return Err(format!("page {}: no data.tldPriceList", i + 1));
        };
        for t in list {
            let Some(key) = t.get("tld").and_then(Value::as_str) else {
                rows.push(RawRow {
                    malformed: true,
                    ..RawRow::default()
                });
                continue;
            };
            rows.push(RawRow {
                // "Yes" when the TLD is on sale (the documented string; a JSON true too):
                // the first-year price is a promotion whose regular price the list does
                // not give.
                promotion: match t.get("onSale") {
                    Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("yes"),
                    Some(Value::Bool(b)) => *b,
                    _ => false,
                },
                ..row(
                    key.to_string(),
                    first_year(
                        t.get("allYearsRegisterPrice")
                            .or_else(|| t.get("registerPrice")),
                    ),
                    first_year(t.get("allYearsRenewPrice").or_else(|| t.get("renewPrice"))),
                    feeds::field(t.get("transferPrice")),
                    upper(t.get("currency").or_else(|| page.pointer("/data/currency"))),
                )
            });
        }
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// Name.com `core/v1/tldpricing` pages: `{"pricing": [{"tld", "duration",
/// "registrationPrice", "registrationOriginalPrice", "renewalPrice", "transferInPrice",
/// ...}], "nextPage"?}`. Only one-year rows count; `registrationPrice` is what a new
/// customer pays today (`registrationOriginalPrice` is the price before a promotion).
pub fn parse_namecom(bytes: &[u8]) -> Result<Parsed, String> {
    let doc = json(bytes, "Name.com tldpricing pages")?;
    let mut rows = Vec::new();
    for (i, page) in pages(doc).into_iter().enumerate() {
        let Some(list) = page.get("pricing").and_then(Value::as_array) else {
            return Err(format!(
                "page {}: no \"pricing\" list{}",
                i + 1,
                page.get("message")
                    .and_then(Value::as_str)
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ));
        };
        for t in list {
            let Some(key) = t.get("tld").and_then(Value::as_str) else {
                rows.push(RawRow {
                    malformed: true,
                    ..RawRow::default()
                });
                continue;
            };
            if t.get("duration")
                .and_then(Value::as_i64)
                .is_some_and(|d| d != 1)
            {
                continue;
            }
            let register = feeds::field(t.get("registrationPrice"));
            let original = feeds::field(t.get("registrationOriginalPrice"));
            rows.push(RawRow {
                // The price before a running promotion, when above today's.
                regular_register: regular_beside(register, original),
                ..row(
                    key.to_string(),
                    register,
                    feeds::field(t.get("renewalPrice")),
                    feeds::field(t.get("transferInPrice")),
                    "USD".to_string(),
                )
            });
        }
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// Openprovider `v1beta/tlds?with_price=true` pages: `{"code": 0, "desc", "data":
/// {"results": [{"name", "prices": {"create_price": {"product": {"price",
/// "currency"}, "reseller": {...}}, "renew_price", "transfer_price", ...}, ...}],
/// "total"}}`. The product price is the list price; a non-zero code is an error
/// answer.
pub fn parse_openprovider_api(bytes: &[u8]) -> Result<Parsed, String> {
    let doc = json(bytes, "Openprovider tlds pages")?;
    let mut rows = Vec::new();
    for (i, page) in pages(doc).into_iter().enumerate() {
        if page.get("code").and_then(Value::as_i64) != Some(0) {
            return Err(format!(
                "page {}: Openprovider code {} ({}), not 0",
                i + 1,
                page.get("code")
                    .map_or("missing".to_string(), Value::to_string),
                page.get("desc").and_then(Value::as_str).unwrap_or("")
            ));
        }
        let Some(list) = page.pointer("/data/results").and_then(Value::as_array) else {
            return Err(format!("page {}: no data.results", i + 1));
        };
        for t in list {
            let Some(key) = t.get("name").and_then(Value::as_str) else {
                rows.push(RawRow {
                    malformed: true,
                    ..RawRow::default()
                });
                continue;
            };
            let price = |action: &str| t.pointer(&format!("/prices/{action}/product"));
            let stated: Vec<String> = ["create_price", "renew_price", "transfer_price"]
                .iter()
                .filter_map(|a| price(a).map(|p| upper(p.get("currency"))))
                .collect();
            let currency = match stated.first() {
                None => "USD".to_string(),
                Some(first) if stated.iter().all(|c| c == first) => first.clone(),
                Some(_) => "?".to_string(),
            };
            rows.push(row(
                key.to_string(),
                feeds::field(price("create_price").and_then(|p| p.get("price"))),
                feeds::field(price("renew_price").and_then(|p| p.get("price"))),
                feeds::field(price("transfer_price").and_then(|p| p.get("price"))),
                currency,
            ));
        }
    }
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

/// A Namecheap row with its ICANN fee added to every price, as every other source's
/// prices include it (docs/IMPORT.md, "Terms"): Namecheap states the fee of a year
/// apart (`AdditionalCost` of the one-year registration) and charges it on top of each
/// year registered, renewed or transferred. A free transfer stays free.
fn with_icann_fee(mut row: RawRow) -> RawRow {
    let Field::Cents(fee) = row.icann_fee else {
        return row;
    };
    let add = |f: &mut Field, years: u32| {
        if let Field::Cents(c) = *f
            && c > 0
        {
            *f = fee
                .checked_mul(years)
                .and_then(|extra| c.checked_add(extra))
                .map_or(Field::Bad, Field::Cents);
        }
    };
    for f in [
        &mut row.register,
        &mut row.renew,
        &mut row.transfer,
        &mut row.regular_register,
    ] {
        add(f, 1);
    }
    for (i, total) in row.register_years.iter_mut().enumerate() {
        add(total, i as u32 + 2);
    }
    row.icann_fee_included = true;
    row
}

/// Namecheap `namecheap.users.getPricing` (`ProductType=DOMAIN`) XML: `ApiResponse
/// Status="OK" > CommandResponse > UserGetPricingResult > ProductType > ProductCategory
/// Name="REGISTER|RENEW|TRANSFER|..." > Product Name="com" > Price Duration="1"
/// DurationType="YEAR" Price RegularPrice YourPrice AdditionalCost Currency`. The price
/// per action is the one-year `Price` (what namecheap.com charges anyone today,
/// promotions included; `RegularPrice` is the list price); `Status="ERROR"` is an error
/// answer.
pub fn parse_namecheap_xml(bytes: &[u8]) -> Result<Parsed, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut status: Option<String> = None;
    let mut errors = Vec::new();
    let mut in_error = false;
    let mut category = String::new();
    let mut product: Option<String> = None;
    // key -> (register, renew, transfer, currency), in file order
    let mut order: Vec<String> = Vec::new();
    let mut by_key: std::collections::HashMap<String, RawRow> = std::collections::HashMap::new();
    // Several-year prices met before the name's one-year row.
    let mut pending_years: Vec<(String, usize, Field)> = Vec::new();
    let attr = |e: &quick_xml::events::BytesStart<'_>, name: &str| -> Option<String> {
        e.attributes().flatten().find_map(|a| {
            (a.key.as_ref() == name.as_bytes())
                .then(|| String::from_utf8_lossy(&a.value).into_owned())
        })
    };
    loop {
        match reader.read_event_into(&mut buf) {
            Err(e) => {
                return Err(format!(
                    "not a Namecheap getPricing XML answer (at byte {}): {e}",
                    reader.error_position()
                ));
            }
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"ApiResponse" => status = attr(&e, "Status"),
                b"Error" => in_error = true,
                b"ProductCategory" => {
                    category = attr(&e, "Name").unwrap_or_default().to_ascii_uppercase()
                }
                b"Product" => product = attr(&e, "Name"),
                b"Price" => {
                    let Some(key) = product.clone() else {
                        continue;
                    };
                    let years = attr(&e, "Duration")
                        .and_then(|d| d.trim().parse::<usize>().ok())
                        .filter(|_| {
                            attr(&e, "DurationType").is_none_or(|t| t.eq_ignore_ascii_case("YEAR"))
                        });
                    let Some(years) = years.filter(|y| (1..=crate::source::MAX_YEARS).contains(y))
                    else {
                        continue;
                    };
                    if years > 1 {
                        // A registration for several years: `Price` is a year's price
                        // (`PricingType="MULTIPLE"`, the default) or the whole
                        // (`"ABSOLUTE"`).
                        if category != "REGISTER" {
                            continue;
                        }
                        let per_year = !attr(&e, "PricingType")
                            .is_some_and(|t| t.eq_ignore_ascii_case("ABSOLUTE"));
                        let total = match attr(&e, "Price").map(|p| feeds::decimal_field(&p)) {
                            Some(Field::Cents(c)) if per_year => {
                                c.checked_mul(years as u32).map_or(Field::Bad, Field::Cents)
                            }
                            Some(f) => f,
                            None => Field::Missing,
                        };
                        if let Some(entry) = by_key.get_mut(&key) {
                            entry.register_years[years - 2] = total;
                        } else {
                            pending_years.push((key, years, total));
                        }
                        continue;
                    }
                    let price =
                        attr(&e, "Price").map_or(Field::Missing, |p| feeds::decimal_field(&p));
                    let regular = attr(&e, "RegularPrice")
                        .map_or(Field::Missing, |p| feeds::decimal_field(&p));
                    // The ICANN fee Namecheap charges on top of the price.
                    let fee = attr(&e, "AdditionalCost")
                        .map_or(Field::Missing, |p| feeds::decimal_field(&p));
                    let currency = attr(&e, "Currency")
                        .map_or("USD".to_string(), |c| c.trim().to_ascii_uppercase());
                    let entry = by_key.entry(key.clone()).or_insert_with(|| {
                        order.push(key.clone());
                        RawRow {
                            key: key.clone(),
                            currency: currency.clone(),
                            ..RawRow::default()
                        }
                    });
                    if entry.currency != currency {
                        entry.currency = "?".to_string();
                    }
                    match category.as_str() {
                        "REGISTER" => {
                            entry.register = price;
                            entry.regular_register = regular_beside(price, regular);
                            if let Field::Cents(f) = fee
                                && f > 0
                            {
                                entry.icann_fee = fee;
                            }
                        }
                        "RENEW" => entry.renew = price,
                        "TRANSFER" => entry.transfer = price,
                        _ => {}
                    }
                }
                _ => {}
            },
            Ok(Event::Text(t)) if in_error => {
                errors.push(String::from_utf8_lossy(t.as_ref()).into_owned());
            }
            Ok(Event::End(e)) => match e.name().as_ref() {
                b"Error" => in_error = false,
                b"Product" => product = None,
                _ => {}
            },
            Ok(_) => {}
        }
        buf.clear();
    }
    match status.as_deref() {
        Some(s) if s.eq_ignore_ascii_case("OK") => {}
        Some(s) => {
            return Err(format!(
                "Namecheap Status={s:?}: {}",
                if errors.is_empty() {
                    "no error text".to_string()
                } else {
                    errors.join("; ")
                }
            ));
        }
        None => return Err("not a Namecheap API answer (no ApiResponse Status)".to_string()),
    }
    for (key, years, total) in pending_years {
        if let Some(entry) = by_key.get_mut(&key) {
            entry.register_years[years - 2] = total;
        }
    }
    let rows = order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .map(with_icann_fee)
        .collect();
    Ok(Parsed {
        date_ms: None,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_instant() {
        let s = Shape::of("porkbun").unwrap();
        let ms = time::parse_rfc3339("2026-12-01T21:33:19Z").unwrap();
        let name = s.file_name(ms + 456);
        assert_eq!(name, "porkbun_2026-12-01T21-33-19Z.json");
        assert_eq!(s.instant_of(&name), Some(ms));
        assert_eq!(s.instant_of("porkbun_2026-12-01.json"), None);
        assert_eq!(Shape::of("namecom").unwrap().instant_of(&name), None);
    }

    #[test]
    fn namecheap_xml_one_year_prices_and_errors() {
        let xml = br#"<?xml version="1.0" encoding="utf-8"?>
<ApiResponse Status="OK" xmlns="http://api.namecheap.com/xml.response"><Errors />
<CommandResponse Type="namecheap.users.getPricing"><UserGetPricingResult>
<ProductType Name="domains"><ProductCategory Name="register"><Product Name="com">
<Price Duration="1" DurationType="YEAR" Price="8.88" PricingType="MULTIPLE" AdditionalCost="0.18" RegularPrice="10.98" YourPrice="10.98" Currency="USD" />
<Price Duration="2" DurationType="YEAR" Price="10.98" RegularPrice="10.98" Currency="USD" />
</Product></ProductCategory><ProductCategory Name="renew"><Product Name="com">
<Price Duration="1" DurationType="YEAR" Price="12.98" Currency="USD" /></Product></ProductCategory>
</ProductType></UserGetPricingResult></CommandResponse></ApiResponse>"#;
        let p = parse_namecheap_xml(xml).unwrap();
        assert_eq!(p.rows.len(), 1);
        // Every price with the ICANN fee of each year added, as Namecheap charges it.
        assert_eq!(p.rows[0].register, Field::Cents(888 + 18));
        assert_eq!(p.rows[0].regular_register, Field::Cents(1098 + 18));
        // Two years at 10.98 a year (PricingType MULTIPLE by default), two fees.
        assert_eq!(p.rows[0].register_years[0], Field::Cents(2196 + 36));
        assert_eq!(p.rows[0].register_years[1], Field::Missing);
        assert_eq!(p.rows[0].icann_fee, Field::Cents(18));
        assert!(p.rows[0].icann_fee_included);
        assert_eq!(p.rows[0].renew, Field::Cents(1298 + 18));
        assert_eq!(p.rows[0].transfer, Field::Missing);
        let err = br#"<ApiResponse Status="ERROR"><Errors><Error Number="1011102">API Key is invalid or API access has not been enabled</Error></Errors></ApiResponse>"#;
        assert!(
            parse_namecheap_xml(err)
                .unwrap_err()
                .contains("API Key is invalid")
        );
        assert!(parse_namecheap_xml(b"<html><body>oops</body></html>").is_err());
    }

    #[test]
    fn namecom_keeps_the_price_before_a_promotion() {
        let page = br#"{"pricing":[
            {"tld":"com","duration":1,"registrationPrice":8.99,"registrationOriginalPrice":12.99,"renewalPrice":12.99,"transferInPrice":12.99},
            {"tld":"net","duration":1,"registrationPrice":14.99,"registrationOriginalPrice":14.99,"renewalPrice":14.99},
            {"tld":"com","duration":2,"registrationPrice":25.98}]}"#;
        let p = parse_namecom(page).unwrap();
        assert_eq!(p.rows.len(), 2);
        assert_eq!(
            (p.rows[0].register, p.rows[0].regular_register),
            (Field::Cents(899), Field::Cents(1299))
        );
        assert_eq!(p.rows[1].regular_register, Field::Missing);
    }

    #[test]
    fn namesilo_needs_code_300() {
        let ok = br#"{"request":{"operation":"getPrices","ip":"1.2.3.4"},"reply":{"code":300,"detail":"success","com":{"registration":"17.29","transfer":"17.29","renew":"17.29"}}}"#;
        let p = parse_namesilo(ok).unwrap();
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.rows[0].register, Field::Cents(1729));
        let bad = br#"{"request":{},"reply":{"code":110,"detail":"Invalid API Key"}}"#;
        assert!(parse_namesilo(bad).unwrap_err().contains("Invalid API Key"));
    }
}
