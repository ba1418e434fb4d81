//! The European Central Bank's euro reference rates: the ECB's last 90 days of rates,
//! merged into the rate table the import converts prices with
//! (`<fx>/eurofxref-hist.csv`, [`crate::import::fx`]).
//!
//! `GET https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml`; no
//! credential. The answer is
//!
//! ```text
//! <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"
//!                  xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
//!   <gesmes:subject>Reference rates</gesmes:subject>
//!   <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
//!   <Cube>
//!     <Cube time="2026-04-13"><Cube currency="USD" rate="1.1684"/>...</Cube>
//!     ...
//!   </Cube>
//! </gesmes:Envelope>
//! ```
//!
//! one `Cube time` per TARGET business day, newest first, each rate the units of the
//! currency for 1 EUR. When the 90 days do not reach back to the table's newest day
//! (the table is older than that), the whole history, `eurofxref-hist.xml` (same
//! shape, every day since 1999-01-04), is fetched instead, so that no day goes missing
//! between the table and the answer.
//!
//! The answer is merged into the table: the days the table has must agree with it, the
//! newer days are added as rows in the table's own layout (its header, its column
//! order, `N/A` for a currency not quoted that day, a rate written as the ECB's CSV
//! writes it: no trailing zeros, `143.2` for `143.20`), and every other row is kept byte
//! for byte. The new table replaces the old one atomically; the answer is kept unedited
//! as `<fx>/collected/ecb_<instant>.xml` with a provenance line in
//! `<fx>/collected/ecb.provenance.jsonl`, as the registrars' versions are.
//!
//! An answer that fails a rule of [`check`] is kept aside in `<fx>/quarantine/` with a
//! report, and the table is not touched. `--accept ecb` merges the newest quarantined
//! answer with the rules that need a person's judgement waived ([`Rule::waivable`]):
//! then the answer's rates replace the table's where they disagree, and a day the table
//! lacks is inserted in its place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::client::Request;
use super::gate::{self, Failed, Thresholds};
use super::{Collector, Ctx, Outcome, Page, store};
use crate::import::collected::{COLLECTED_DIR, QUARANTINE_DIR, version_instant, version_name};
use crate::import::fx::RATES_FILE;
use crate::time;

/// The collector's key (its configuration table, `[ecb]`).
pub const KEY: &str = "ecb";
/// The last 90 days of reference rates.
pub const ENDPOINT: &str = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml";
/// Every day of reference rates since 1999, fetched when the 90 days do not reach the
/// table's newest day.
pub const HISTORY: &str = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml";
/// File ending of a kept answer.
const EXT: &str = "xml";

/// The ECB collector.
#[derive(Debug)]
pub struct Ecb;

impl Collector for Ecb {
    fn key(&self) -> &'static str {
        KEY
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn rates(&self) -> bool {
        true
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let url = ctx.config.endpoint(ENDPOINT)?;
            Ok(vec![ctx.fetch(&Request::get(url), "XML").await?])
        })
    }
}

// ------------------------------------------------------------------ the answer

/// One day of an answer: currency -> rate, as the table writes it.
pub type Day = BTreeMap<String, String>;

/// A parsed answer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Days (since 1970-01-01) and their rates.
    pub days: BTreeMap<i64, Day>,
    /// Entries that are not of the expected shape, one line each.
    pub bad: Vec<String>,
}

impl Answer {
    /// The oldest and newest day.
    pub fn range(&self) -> Option<(i64, i64)> {
        Some((
            *self.days.first_key_value()?.0,
            *self.days.last_key_value()?.0,
        ))
    }
}

/// A rate as the ECB's CSV writes it: `1.1684`, `143.2` for `143.20`, `305` for
/// `305.0000`. `None` unless it is a decimal number above zero that the table's reader
/// takes (at most 9 decimals, at most 13 digits).
pub fn normalize_rate(text: &str) -> Option<String> {
    let s = text.trim();
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) || (s.contains('.') && frac.is_empty()) {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if (whole.is_empty() && frac.is_empty()) || frac.len() > 9 || whole.len() + frac.len() > 13 {
        return None;
    }
    let whole = if whole.is_empty() { "0" } else { whole };
    Some(if frac.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{frac}")
    })
}

/// Parses the ECB's reference rate XML (the module docs' shape). `Err` when it is not
/// that document at all; entries of the wrong shape (a bad date, a rate that is not a
/// number above zero, a day or a currency given twice) are listed in [`Answer::bad`].
pub fn parse_xml(bytes: &[u8]) -> Result<Answer, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut answer = Answer::default();
    let mut depth = 0usize;
    let mut envelope = false;
    // The depth of the outer `Cube`, and the day being read.
    let mut cubes: Option<usize> = None;
    let mut day: Option<(i64, String)> = None;
    let attr = |e: &quick_xml::events::BytesStart<'_>, name: &str| -> Option<String> {
        e.attributes().flatten().find_map(|a| {
            (a.key.local_name().as_ref() == name.as_bytes())
                .then(|| String::from_utf8_lossy(&a.value).into_owned())
        })
    };
    loop {
        let event = reader.read_event_into(&mut buf);
        let (e, empty) = match event {
            Err(e) => {
                return Err(format!(
                    "not XML (at byte {}): {e}",
                    reader.error_position()
                ));
            }
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => (e, false),
            Ok(Event::Empty(e)) => (e, true),
            Ok(Event::End(_)) => {
                depth = depth.saturating_sub(1);
                if cubes.is_some_and(|c| depth == c + 1) {
                    day = None;
                }
                if cubes.is_some_and(|c| depth == c) {
                    cubes = None;
                }
                buf.clear();
                continue;
            }
            Ok(Event::Text(t)) if depth == 0 => {
                let text: &[u8] = &t;
                return Err(format!(
                    "not the ECB's reference rate XML: text outside any element: {}",
                    super::snippet(text)
                ));
            }
            Ok(_) => {
                buf.clear();
                continue;
            }
        };
        let name = e.local_name().as_ref().to_vec();
        if depth == 0 {
            if name != b"Envelope" {
                return Err(format!(
                    "not the ECB's reference rate XML: the document is <{}>, not <gesmes:Envelope>",
                    String::from_utf8_lossy(e.name().as_ref())
                ));
            }
            envelope = true;
        } else if name == b"Cube" {
            match cubes {
                None if depth == 1 => cubes = Some(depth),
                None => {}
                Some(c) if depth == c + 1 => {
                    let time = attr(&e, "time").unwrap_or_default();
                    match time::parse_date(time.trim()) {
                        None => {
                            answer
                                .bad
                                .push(format!("day {time:?}: not a date (YYYY-MM-DD)"));
                            day = None;
                        }
                        Some(d) if answer.days.contains_key(&d) => {
                            answer.bad.push(format!("{time}: the day is given twice"));
                            day = None;
                        }
                        Some(d) => {
                            answer.days.insert(d, Day::new());
                            day = Some((d, time.trim().to_string()));
                        }
                    }
                }
                Some(c) if depth == c + 2 => {
                    if let Some((d, date)) = &day {
                        let currency = attr(&e, "currency").unwrap_or_default();
                        let rate = attr(&e, "rate").unwrap_or_default();
                        let code_ok =
                            currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase());
                        let rates = answer.days.entry(*d).or_default();
                        match normalize_rate(&rate) {
                            _ if !code_ok => answer
                                .bad
                                .push(format!("{date}: currency {currency:?} is not a code")),
                            None => answer.bad.push(format!(
                                "{date} {currency}: rate {rate:?} is not a number above zero"
                            )),
                            Some(_) if rates.contains_key(&currency) => {
                                answer.bad.push(format!("{date} {currency}: quoted twice"))
                            }
                            Some(r) => {
                                rates.insert(currency, r);
                            }
                        }
                    }
                }
                Some(_) => {}
            }
        }
        if !empty {
            depth += 1;
        }
        buf.clear();
    }
    if !envelope {
        return Err(format!(
            "not the ECB's reference rate XML (no <gesmes:Envelope>): {}",
            super::snippet(bytes)
        ));
    }
    if depth != 0 {
        return Err("not complete XML: the document ends inside an element".to_string());
    }
    Ok(answer)
}

// ------------------------------------------------------------------ the table

/// The rate table as text: its header, and each row's line and rates.
struct Table<'a> {
    header: &'a str,
    eol: &'static str,
    /// Whether each line ends with a comma (the ECB's header does).
    trailing_comma: bool,
    currencies: Vec<String>,
    rows: BTreeMap<i64, (&'a str, Vec<Option<String>>)>,
}

impl<'a> Table<'a> {
    fn parse(text: &'a str) -> Result<Table<'a>, String> {
        let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        let header = lines.next().unwrap_or("");
        let mut names = header.split(',');
        if names.next().map(str::trim) != Some("Date") {
            return Err("its first column is not \"Date\"".to_string());
        }
        let trailing_comma = header.ends_with(',');
        let currencies: Vec<String> = names
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        if !currencies.iter().any(|c| c == "USD") {
            return Err("it has no USD column".to_string());
        }
        let mut rows = BTreeMap::new();
        for (i, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut fields = line.split(',');
            let date = fields.next().unwrap_or("").trim();
            let day = time::parse_date(date)
                .ok_or_else(|| format!("line {}: date {date:?} is not YYYY-MM-DD", i + 2))?;
            let values = (0..currencies.len())
                .map(|_| fields.next().and_then(normalize_rate))
                .collect();
            if rows.insert(day, (line, values)).is_some() {
                return Err(format!("the date {date} is listed twice"));
            }
        }
        if rows.is_empty() {
            return Err("it has no rows".to_string());
        }
        Ok(Table {
            header,
            eol,
            trailing_comma,
            currencies,
            rows,
        })
    }

    fn newest(&self) -> i64 {
        self.rows.last_key_value().map_or(i64::MIN, |(d, _)| *d)
    }

    /// The answer's `day` in the table's columns.
    fn values_of(&self, day: &Day) -> Vec<Option<String>> {
        self.currencies
            .iter()
            .map(|c| day.get(c).cloned())
            .collect()
    }

    /// A row in the table's layout.
    fn render(&self, day: i64, values: &[Option<String>]) -> String {
        let mut line = time::date_string(day);
        for v in values {
            line.push(',');
            line.push_str(v.as_deref().unwrap_or("N/A"));
        }
        if self.trailing_comma {
            line.push(',');
        }
        line
    }
}

// ------------------------------------------------------------------ the gate

/// The rules an answer must pass before it changes the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The document is the ECB's XML, every entry of the expected shape, and not empty.
    Parses,
    /// Every day quotes USD (the import converts through it).
    QuotesUsd,
    /// No day is after today (UTC).
    NoFutureDay,
    /// Every currency is a column of the table.
    KnownCurrencies,
    /// The answer reaches back to the table's newest day (no day lost in between).
    Overlaps,
    /// The days the table has are the answer's, with the same rates.
    AgreesWithTable,
    /// No day older than the table's newest is missing from the table.
    FillsNoGap,
    /// No rate moves by more than `max_rate_factor` from one day to the next.
    NoBigJump,
}

impl Rule {
    /// Whether `--accept ecb` may take an answer that fails it (a person has judged
    /// the ECB's rates right: a correction, a real jump). The others describe answers
    /// the table cannot take at all.
    pub fn waivable(self) -> bool {
        matches!(
            self,
            Rule::AgreesWithTable | Rule::FillsNoGap | Rule::NoBigJump
        )
    }
}

/// What a merge gives: the new table, the days it added and the days it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The new table's bytes.
    pub bytes: Vec<u8>,
    /// Days added (none: the answer told nothing new).
    pub added: Vec<i64>,
    /// Days whose rates the answer replaced (only with the judgement rules waived).
    pub replaced: Vec<i64>,
    /// The new table's newest day.
    pub newest: i64,
}

fn ratio(a: &str, b: &str) -> f64 {
    let (a, b): (f64, f64) = (a.parse().unwrap_or(0.0), b.parse().unwrap_or(0.0));
    if a <= 0.0 || b <= 0.0 {
        return f64::INFINITY;
    }
    (a / b).max(b / a)
}

/// Checks `answer` against the table `table` and merges it. `Err(reason)` when the
/// table itself cannot be read; `Ok(Err(rules))` when the answer fails rules (with
/// `waive`, only the rules that are not [`Rule::waivable`] count).
pub fn check(
    table: &[u8],
    answer: &Answer,
    today: i64,
    t: &Thresholds,
    waive: bool,
) -> Result<Result<Merged, Vec<(Rule, Failed)>>, String> {
    let text = std::str::from_utf8(table).map_err(|_| "it is not UTF-8 text".to_string())?;
    let table = Table::parse(text)?;
    let newest = table.newest();
    let mut failed: Vec<(Rule, Failed)> = Vec::new();
    let mut fail = |rule: Rule, text: String, rows: Vec<String>| {
        if !(waive && rule.waivable()) {
            failed.push((rule, Failed { rule: text, rows }));
        }
    };
    let date = time::date_string;

    if !answer.bad.is_empty() {
        fail(
            Rule::Parses,
            format!(
                "parses completely: {} entries are not of the expected shape",
                answer.bad.len()
            ),
            answer.bad.clone(),
        );
    }
    let Some((oldest_day, newest_day)) = answer.range() else {
        fail(
            Rule::Parses,
            "parses completely: the answer has no day".to_string(),
            Vec::new(),
        );
        return Ok(Err(failed));
    };
    let no_usd: Vec<String> = answer
        .days
        .iter()
        .filter(|(_, rates)| !rates.contains_key("USD"))
        .map(|(d, _)| format!("{}: no USD rate", date(*d)))
        .collect();
    if !no_usd.is_empty() {
        fail(
            Rule::QuotesUsd,
            format!("quotes USD: {} days have no USD rate", no_usd.len()),
            no_usd,
        );
    }
    let future: Vec<String> = answer
        .days
        .range(today + 1..)
        .map(|(d, _)| format!("{}: after today, {}", date(*d), date(today)))
        .collect();
    if !future.is_empty() {
        fail(
            Rule::NoFutureDay,
            format!("no future day: {} days are after today", future.len()),
            future,
        );
    }
    let mut unknown: BTreeMap<&str, (i64, usize)> = BTreeMap::new();
    for (d, rates) in &answer.days {
        for c in rates.keys() {
            if !table.currencies.contains(c) {
                let e = unknown.entry(c).or_insert((*d, 0));
                e.1 += 1;
            }
        }
    }
    if !unknown.is_empty() {
        fail(
            Rule::KnownCurrencies,
            format!(
                "known currencies: {} currencies are not columns of {RATES_FILE}",
                unknown.len()
            ),
            unknown
                .iter()
                .map(|(c, (d, n))| format!("{c}: quoted on {n} days from {}, no column", date(*d)))
                .collect(),
        );
    }
    if oldest_day > newest {
        fail(
            Rule::Overlaps,
            format!(
                "overlaps the table: the answer starts on {}, after the table's newest day {}; the days between would be missing",
                date(oldest_day),
                date(newest)
            ),
            Vec::new(),
        );
    }

    // Disagreeing days, and the table's days the answer leaves out within its span.
    let mut disagree = Vec::new();
    let mut replaced = Vec::new();
    for (d, rates) in &answer.days {
        let Some((_, old)) = table.rows.get(d) else {
            continue;
        };
        let new = table.values_of(rates);
        if *old != new {
            replaced.push(*d);
            for (i, c) in table.currencies.iter().enumerate() {
                if old[i] != new[i] {
                    disagree.push(format!(
                        "{} {c}: table {}, answer {}",
                        date(*d),
                        old[i].as_deref().unwrap_or("N/A"),
                        new[i].as_deref().unwrap_or("N/A"),
                    ));
                }
            }
        }
    }
    let left_out: Vec<String> = table
        .rows
        .range(oldest_day..=newest_day)
        .filter(|(d, _)| !answer.days.contains_key(d))
        .map(|(d, _)| format!("{}: in the table, not in the answer", date(*d)))
        .collect();
    if !disagree.is_empty() || !left_out.is_empty() {
        let n = replaced.len() + left_out.len();
        disagree.extend(left_out);
        fail(
            Rule::AgreesWithTable,
            format!("agrees with the table: {n} days the table has differ in the answer"),
            disagree,
        );
    }
    let gaps: Vec<i64> = answer
        .days
        .keys()
        .filter(|d| **d < newest && !table.rows.contains_key(d))
        .copied()
        .collect();
    if !gaps.is_empty() {
        fail(
            Rule::FillsNoGap,
            format!(
                "fills no gap: {} days older than the table's newest day {} are missing from the table",
                gaps.len(),
                date(newest)
            ),
            gaps.iter()
                .map(|d| format!("{}: not in the table", date(*d)))
                .collect(),
        );
    }

    // The merged rows, and the jumps next to the rows written.
    let mut rows: BTreeMap<i64, Vec<Option<String>>> = table
        .rows
        .iter()
        .map(|(d, (_, v))| (*d, v.clone()))
        .collect();
    let mut written: BTreeSet<i64> = BTreeSet::new();
    for (d, rates) in &answer.days {
        let values = table.values_of(rates);
        if rows.get(d) != Some(&values) {
            rows.insert(*d, values);
            written.insert(*d);
        }
    }
    let mut pairs: BTreeSet<(i64, i64)> = BTreeSet::new();
    for d in &written {
        if let Some((older, _)) = rows.range(..*d).next_back() {
            pairs.insert((*older, *d));
        }
        if let Some((newer, _)) = rows.range(*d + 1..).next() {
            pairs.insert((*d, *newer));
        }
    }
    let mut jumps = Vec::new();
    for (a, b) in pairs {
        for (i, c) in table.currencies.iter().enumerate() {
            if let (Some(x), Some(y)) = (&rows[&a][i], &rows[&b][i]) {
                let r = ratio(x, y);
                if r > t.max_rate_factor {
                    jumps.push(format!(
                        "{} {c}: {x} on {} -> {y} (x{r:.2})",
                        date(b),
                        date(a)
                    ));
                }
            }
        }
    }
    if !jumps.is_empty() {
        fail(
            Rule::NoBigJump,
            format!(
                "no big jump: {} rates moved by a factor above {} from one day to the next",
                jumps.len(),
                t.max_rate_factor
            ),
            jumps,
        );
    }
    if !failed.is_empty() {
        return Ok(Err(failed));
    }

    let added: Vec<i64> = written
        .iter()
        .filter(|d| !table.rows.contains_key(d))
        .copied()
        .collect();
    let mut out = String::with_capacity(text.len() + 512 * written.len());
    out.push_str(table.header);
    out.push_str(table.eol);
    for (d, values) in rows.iter().rev() {
        if written.contains(d) {
            out.push_str(&table.render(*d, values));
        } else {
            out.push_str(table.rows[d].0);
        }
        out.push_str(table.eol);
    }
    let bytes = out.into_bytes();
    // Never write a table the import would refuse.
    crate::import::fx::Rates::parse(&bytes)
        .map_err(|e| format!("the merged table does not read back: {e}"))?;
    Ok(Ok(Merged {
        bytes,
        added,
        replaced: written
            .iter()
            .filter(|d| table.rows.contains_key(d))
            .copied()
            .collect(),
        newest: *rows.last_key_value().map_or(&newest, |(d, _)| d),
    }))
}

// ------------------------------------------------------------------ the files

fn dir_name(fx: &Path) -> String {
    fx.file_name().map_or_else(
        || fx.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn provenance_name() -> String {
    format!("{KEY}.provenance.jsonl")
}

fn table_path(fx: &Path) -> std::path::PathBuf {
    fx.join(RATES_FILE)
}

fn read_table(fx: &Path) -> Result<Vec<u8>, String> {
    let path = table_path(fx);
    std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e} (the rates are merged into the ECB's table; place eurofxref-hist.csv there first)",
            path.display()
        )
    })
}

/// A name for an answer collected at `ms` that no file has yet.
fn free_name(fx: &Path, ms: i64) -> String {
    let mut at = ms;
    loop {
        let name = version_name(KEY, EXT, at);
        if !fx.join(COLLECTED_DIR).join(&name).exists()
            && !fx.join(QUARANTINE_DIR).join(&name).exists()
        {
            return name;
        }
        at += 1000;
    }
}

fn days_text(days: &[i64]) -> Vec<String> {
    days.iter().map(|d| time::date_string(*d)).collect()
}

/// The collector `c` (the ECB's) against the table in `fx`: fetches the 90 days (and the
/// whole history when they do not reach the table's newest day), checks and merges.
pub async fn collect_and_keep(
    c: &dyn Collector,
    ctx: Ctx<'_>,
    fx: &Path,
    t: &Thresholds,
    fetched_at: i64,
) -> Result<Outcome, String> {
    let table = read_table(fx)?;
    let mut pages = c.collect(ctx).await?;
    if let Ok(answer) = parse_xml(&pages[0].body)
        && let Some((oldest, _)) = answer.range()
        && let Ok(t) = std::str::from_utf8(&table)
        && let Ok(table) = Table::parse(t)
        && oldest > table.newest()
    {
        let url = ctx.config.endpoint(HISTORY)?;
        pages = vec![ctx.fetch(&Request::get(url), "XML").await?];
    }
    keep(fx, c, t, &pages, &table, fetched_at)
}

/// Keeps what the ECB answered (`pages`, one): merged into the table, or quarantined.
pub fn keep(
    fx: &Path,
    c: &dyn Collector,
    t: &Thresholds,
    pages: &[Page],
    table: &[u8],
    fetched_at: i64,
) -> Result<Outcome, String> {
    let bytes = store::assemble(pages);
    let today = fetched_at.div_euclid(86_400_000);
    let checked = match parse_xml(&bytes) {
        Ok(answer) => check(table, &answer, today, t, false)
            .map_err(|e| format!("{}: {e}", table_path(fx).display()))?,
        Err(e) => Err(vec![(
            Rule::Parses,
            Failed {
                rule: format!("parses completely: {e}"),
                rows: Vec::new(),
            },
        )]),
    };
    let name = free_name(fx, fetched_at);
    let dir = dir_name(fx);
    let collected = fx.join(COLLECTED_DIR);
    match checked {
        Ok(merged) if merged.added.is_empty() && merged.replaced.is_empty() => {
            let mut rec = store::record(c, &name, "unchanged", fetched_at, &bytes, pages);
            if let Some(obj) = rec.as_object_mut() {
                obj.remove("version");
            }
            rec["table"] = json!(RATES_FILE);
            rec["newest_day"] = json!(time::date_string(merged.newest));
            store::append_line(&collected, &provenance_name(), rec)?;
            Ok(Outcome::RatesUnchanged(
                format!("{dir}/{RATES_FILE}"),
                time::date_string(merged.newest),
            ))
        }
        Ok(merged) => {
            store::write_atomic(&collected.join(&name), &bytes)?;
            store::write_atomic(&table_path(fx), &merged.bytes)?;
            let mut rec = store::record(c, &name, "new", fetched_at, &bytes, pages);
            rec["table"] = json!(RATES_FILE);
            rec["added"] = json!(days_text(&merged.added));
            rec["newest_day"] = json!(time::date_string(merged.newest));
            store::append_line(&collected, &provenance_name(), rec)?;
            Ok(Outcome::Rates {
                table: format!("{dir}/{RATES_FILE}"),
                version: format!("{dir}/{COLLECTED_DIR}/{name}"),
                added: merged.added.len(),
                newest: time::date_string(merged.newest),
            })
        }
        Err(failed) => {
            let qdir = fx.join(QUARANTINE_DIR);
            let rel = format!("{dir}/{QUARANTINE_DIR}/{name}");
            store::write_atomic(&qdir.join(&name), &bytes)?;
            let failed: Vec<Failed> = failed.into_iter().map(|(_, f)| f).collect();
            let report_name = format!("{name}.report.txt");
            store::write_atomic(
                &qdir.join(&report_name),
                report(&rel, &format!("{dir}/{RATES_FILE}"), &failed).as_bytes(),
            )?;
            store::append_line(
                &collected,
                &provenance_name(),
                store::record(c, &name, "quarantined", fetched_at, &bytes, pages),
            )?;
            Ok(Outcome::Quarantined(
                rel,
                format!("{dir}/{QUARANTINE_DIR}/{report_name}"),
                failed.iter().map(|f| f.rule.clone()).collect(),
            ))
        }
    }
}

/// The report of a quarantined answer: every failed rule and its rows.
pub fn report(file: &str, table: &str, failed: &[Failed]) -> String {
    let mut out = format!(
        "Quarantined: {KEY} {file}\nCompared with: {table}\n\nThe answer is kept aside and the rate table is unchanged.\nIf the ECB's rates are right (a correction, a real jump), take them with: tldsnap collect --config FILE --fx DIR --accept {KEY}\n(that waives the rules \"agrees with the table\", \"fills no gap\" and \"no big jump\"; the others still hold)\n"
    );
    gate::push_rules(&mut out, failed);
    out
}

/// Records that collecting the rates at `fetched_at` failed, and why.
pub fn record_failure(
    fx: &Path,
    c: &dyn Collector,
    fetched_at: i64,
    reason: &str,
) -> Result<(), String> {
    store::append_line(
        &fx.join(COLLECTED_DIR),
        &provenance_name(),
        store::failure_record(c, fetched_at, reason),
    )
}

/// Merges the newest quarantined answer into the table with the judgement rules
/// waived ([`Rule::waivable`]), and keeps it as a collected answer.
pub fn accept(fx: &Path, c: &dyn Collector, t: &Thresholds) -> Result<Outcome, String> {
    let qdir = fx.join(QUARANTINE_DIR);
    let mut found: Vec<(i64, String)> = std::fs::read_dir(&qdir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    version_instant(KEY, EXT, &name).map(|ms| (ms, name))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    let Some((ms, name)) = found.pop() else {
        return Err(format!(
            "nothing quarantined to accept in {}",
            qdir.display()
        ));
    };
    let bytes = std::fs::read(qdir.join(&name)).map_err(|e| format!("{}: {e}", qdir.display()))?;
    let answer = parse_xml(&bytes).map_err(|e| format!("{name} cannot be taken: {e}"))?;
    let table = read_table(fx)?;
    let today = crate::time::now_ms().div_euclid(86_400_000);
    let merged = match check(&table, &answer, today, t, true)
        .map_err(|e| format!("{}: {e}", table_path(fx).display()))?
    {
        Ok(m) => m,
        Err(failed) => {
            return Err(format!(
                "{name} cannot be taken: {}",
                failed
                    .iter()
                    .map(|(_, f)| f.rule.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    };
    let collected = fx.join(COLLECTED_DIR);
    std::fs::create_dir_all(&collected).map_err(|e| format!("{}: {e}", collected.display()))?;
    std::fs::rename(qdir.join(&name), collected.join(&name))
        .map_err(|e| format!("{}: {e}", collected.display()))?;
    let _ = std::fs::remove_file(qdir.join(format!("{name}.report.txt")));
    if merged.bytes != table {
        store::write_atomic(&table_path(fx), &merged.bytes)?;
    }
    let mut rec = store::record(c, &name, "accepted", ms, &bytes, &[]);
    rec["accepted_at"] = json!(crate::time::iso_millis(crate::time::now_ms()));
    rec["table"] = json!(RATES_FILE);
    rec["added"] = json!(days_text(&merged.added));
    rec["replaced"] = json!(days_text(&merged.replaced));
    rec["newest_day"] = json!(time::date_string(merged.newest));
    if let Some(obj) = rec.as_object_mut() {
        obj.remove("requests");
    }
    store::append_line(&collected, &provenance_name(), rec)?;
    Ok(Outcome::Accepted(format!(
        "{}/{COLLECTED_DIR}/{name}",
        dir_name(fx)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Date,USD,JPY,GBP,NGN,\n\
        2026-04-13,1.1684,186.75,0.87058,N/A,\n\
        2026-04-10,1.1711,186.43,0.87105,N/A,\n\
        2026-04-08,1.25,N/A,0.8,N/A,\n";

    fn xml(days: &[(&str, &[(&str, &str)])]) -> Vec<u8> {
        let mut s = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gesmes:Envelope xmlns:gesmes=\"http://www.gesmes.org/xml/2002-08-01\" xmlns=\"http://www.ecb.int/vocabulary/2002-08-01/eurofxref\"><gesmes:subject>Reference rates</gesmes:subject><gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender><Cube>",
        );
        for (d, rates) in days {
            s.push_str(&format!("<Cube time='{d}'>"));
            for (c, r) in *rates {
                s.push_str(&format!("<Cube currency='{c}' rate='{r}'/>"));
            }
            s.push_str("</Cube>");
        }
        s.push_str("</Cube></gesmes:Envelope>");
        s.into_bytes()
    }

    fn day(s: &str) -> i64 {
        time::parse_date(s).unwrap()
    }

    fn run(answer: &[u8], waive: bool) -> Result<Merged, Vec<Rule>> {
        let a = parse_xml(answer).map_err(|_| vec![Rule::Parses])?;
        check(
            TABLE.as_bytes(),
            &a,
            day("2026-04-20"),
            &Thresholds::default(),
            waive,
        )
        .unwrap()
        .map_err(|f| f.into_iter().map(|(r, _)| r).collect())
    }

    #[test]
    fn rates_are_written_as_the_ecb_csv_writes_them() {
        assert_eq!(normalize_rate("143.20").as_deref(), Some("143.2"));
        assert_eq!(normalize_rate("305.0000").as_deref(), Some("305"));
        assert_eq!(normalize_rate(" 0.73760 ").as_deref(), Some("0.7376"));
        assert_eq!(normalize_rate("20082.05").as_deref(), Some("20082.05"));
        for bad in [
            "0",
            "0.000",
            "",
            "N/A",
            "-1.2",
            "1,2",
            "1.",
            ".5",
            "1e3",
            "1.0000000001",
        ] {
            assert_eq!(normalize_rate(bad), None, "{bad}");
        }
    }

    #[test]
    fn new_days_are_added_in_the_table_layout_and_old_rows_kept() {
        let a = xml(&[
            ("2026-04-14", &[("USD", "1.1700"), ("GBP", "0.87100")]),
            (
                "2026-04-13",
                &[("USD", "1.1684"), ("JPY", "186.75"), ("GBP", "0.87058")],
            ),
        ]);
        let m = run(&a, false).unwrap();
        assert_eq!(m.added, vec![day("2026-04-14")]);
        assert!(m.replaced.is_empty());
        let text = String::from_utf8(m.bytes).unwrap();
        assert_eq!(
            text,
            format!(
                "Date,USD,JPY,GBP,NGN,\n2026-04-14,1.17,N/A,0.871,N/A,\n{}",
                TABLE.split_once('\n').unwrap().1
            )
        );
        // The same answer again adds nothing.
        let again = check(
            text.as_bytes(),
            &parse_xml(&a).unwrap(),
            day("2026-04-20"),
            &Thresholds::default(),
            false,
        )
        .unwrap()
        .unwrap();
        assert!(again.added.is_empty() && again.replaced.is_empty());
        assert_eq!(again.bytes, text.as_bytes());
    }

    #[test]
    fn each_rule_refuses() {
        let ok13: &[(&str, &str)] = &[("USD", "1.1684"), ("JPY", "186.75"), ("GBP", "0.87058")];
        let cases: Vec<(Vec<u8>, Rule)> = vec![
            (b"{\"rates\": {}}".to_vec(), Rule::Parses),
            (
                b"<html><body>maintenance</body></html>".to_vec(),
                Rule::Parses,
            ),
            (xml(&[]), Rule::Parses),
            (
                xml(&[("2026-04-14", &[("USD", "0")]), ("2026-04-13", ok13)]),
                Rule::Parses,
            ),
            (
                xml(&[("2026-04-14", &[("USD", "abc")]), ("2026-04-13", ok13)]),
                Rule::Parses,
            ),
            (
                xml(&[("2026-04-14", &[("GBP", "0.871")]), ("2026-04-13", ok13)]),
                Rule::QuotesUsd,
            ),
            (
                xml(&[("2026-04-21", &[("USD", "1.17")]), ("2026-04-13", ok13)]),
                Rule::NoFutureDay,
            ),
            (
                xml(&[
                    ("2026-04-14", &[("USD", "1.17"), ("XAU", "0.0004")]),
                    ("2026-04-13", ok13),
                ]),
                Rule::KnownCurrencies,
            ),
            (xml(&[("2026-04-15", &[("USD", "1.17")])]), Rule::Overlaps),
            (
                xml(&[(
                    "2026-04-13",
                    &[("USD", "1.1685"), ("JPY", "186.75"), ("GBP", "0.87058")],
                )]),
                Rule::AgreesWithTable,
            ),
            (
                xml(&[
                    ("2026-04-14", &[("USD", "1.17")]),
                    ("2026-04-08", &[("USD", "1.25"), ("GBP", "0.8")]),
                ]),
                Rule::AgreesWithTable,
            ),
            (
                xml(&[("2026-04-13", ok13), ("2026-04-09", &[("USD", "1.17")])]),
                Rule::FillsNoGap,
            ),
            (
                xml(&[("2026-04-14", &[("USD", "11.7")]), ("2026-04-13", ok13)]),
                Rule::NoBigJump,
            ),
        ];
        for (answer, rule) in cases {
            let got = run(&answer, false).unwrap_err();
            assert!(
                got.contains(&rule),
                "{rule:?} expected, got {got:?} for {}",
                String::from_utf8_lossy(&answer)
            );
            if !rule.waivable() {
                assert!(run(&answer, true).is_err(), "{rule:?} is never waived");
            }
        }
    }

    #[test]
    fn accepting_waives_the_judgement_rules_only() {
        // A correction of 2026-04-13 and a real jump on 2026-04-14.
        let a = xml(&[
            ("2026-04-14", &[("USD", "2.5")]),
            (
                "2026-04-13",
                &[("USD", "1.1685"), ("JPY", "186.75"), ("GBP", "0.87058")],
            ),
        ]);
        assert!(run(&a, false).is_err());
        let m = run(&a, true).unwrap();
        assert_eq!(m.added, vec![day("2026-04-14")]);
        assert_eq!(m.replaced, vec![day("2026-04-13")]);
        let text = String::from_utf8(m.bytes).unwrap();
        assert!(
            text.starts_with("Date,USD,JPY,GBP,NGN,\n2026-04-14,2.5,N/A,N/A,N/A,\n2026-04-13,1.1685,186.75,0.87058,N/A,\n2026-04-10,"),
            "{text}"
        );
    }
}
