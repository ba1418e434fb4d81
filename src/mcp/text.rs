//! The text content of a tool result: the REST answer as short lines a model reads,
//! beside the answer itself in `structuredContent`.
//!
//! Each tool kind has its rendering ([`Kind`]): the answer is parsed into the few
//! typed fields the text shows (the structs here, borrowing the answer's strings), and
//! those are written one line per offer, TLD or domain: who sells, what it costs in the
//! answer's currency, the promotion and ICANN fee terms, what is stale. A problem is
//! one line, `code: detail`. The JSON stays the authority: the text says nothing the
//! answer does not, and a body that does not parse as its kind's answer (which no
//! route answers) is given as it is. The live tools' answers are written the same way:
//! what the registry, the resolver or the website said, where from, and when.
//!
//! Amounts are written in the answer's currency with its minor unit: `$9.08` in US
//! dollars, `EUR 8.45`, `JPY 1451` (no decimals for the currencies without them),
//! never with thousands separators.

use std::borrow::Cow;
use std::fmt::{self, Write};
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

/// What a rendering knows besides the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The data date of the snapshot that answered (`YYYY-MM-DD`).
    pub data_date: Option<&'a str>,
    /// The day the call asked for (`at`), when it asked for one.
    pub at: Option<&'a str>,
}

/// The renderings, one per shape of REST answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `cheapest`: offers ranked per TLD.
    Cheapest,
    /// `prices`: chosen registrars' records per TLD.
    Prices,
    /// `tld_registrars`: the sellers of one TLD.
    Registrars,
    /// `tld_overview`: one TLD at a glance.
    Overview,
    /// `price_history`: dated changes per registrar.
    History,
    /// `tld_catalogue`: a page of TLDs.
    Catalogue,
    /// `registrars`: every registrar.
    RegistrarList,
    /// `registrar_prices`: one registrar's price list.
    Registrar,
    /// `portfolio_audit`: each domain's cost now and at best.
    Audit,
    /// `domains_lookup`: the cheapest sellers of each domain's suffix.
    Lookup,
    /// `domain_search`: candidate names with their cheapest registration.
    Search,
    /// `domain_registration`: the registry's record of a domain.
    Registration,
    /// `domain_status`: a domain's EPP status codes, explained.
    Status,
    /// `domain_dns`: a name's record sets.
    Dns,
    /// `domain_availability`: whether one name can be registered, and why.
    Availability,
    /// `domains_availability`: the same for many names.
    BulkAvailability,
    /// `domain_tls`: a website's certificate.
    Tls,
}

/// The text of a 200's `body` of kind `kind`, or `None` when the body is not such an
/// answer.
pub fn success(kind: Kind, body: &[u8], cx: Context<'_>) -> Option<String> {
    let mut buf = Vec::with_capacity(body.len() / 2 + 64);
    render(kind, body, cx, &mut Sink::new(&mut buf, false))
        .then(|| String::from_utf8(buf).expect("the text is written from strings"))
}

/// [`success`]'s text written into `out` as the inside of a JSON string (escaped, no
/// quotes), in one pass; whether `body` was `kind`'s answer (nothing is written when
/// it was not). Whatever it returns true for is a JSON document too, since the
/// rendering parsed all of it.
pub fn write_success(kind: Kind, body: &[u8], cx: Context<'_>, out: &mut Vec<u8>) -> bool {
    render(kind, body, cx, &mut Sink::new(out, true))
}

/// [`write_success`], with the texts of recent answers kept per thread: the same body
/// of the same kind, in the same context, is the same text, so a kept one is copied
/// instead of parsing the body and writing it again.
pub fn write_success_kept(kind: Kind, body: &[u8], cx: Context<'_>, out: &mut Vec<u8>) -> bool {
    if !kind.kept() || body.len() > kept::MAX_BODY {
        return write_success(kind, body, cx, out);
    }
    kept::write(kind, body, cx, out)
}

impl Kind {
    /// Whether its answers are kept: those REST answers the same bytes for again (a
    /// prices answer's elapsed time aside, which its text does not show; the live ones
    /// carry what they learnt when).
    fn kept(self) -> bool {
        !matches!(
            self,
            Kind::Registration
                | Kind::Status
                | Kind::Dns
                | Kind::Availability
                | Kind::BulkAvailability
                | Kind::Tls
        )
    }
}

/// The texts of recent answers, per thread (no lock; the REST answers they are made
/// from are kept per thread too, `api::answers`): a direct-mapped table of [`SLOTS`]
/// texts of answers up to [`MAX_BODY`] bytes, at most [`BUDGET`] bytes in all, a new
/// one taking the slot of the one it hashes to. A slot holds the answer's bytes beside
/// its text and is used only for exactly those bytes, kind and context, so a text is
/// always its answer's. A prices answer is kept without the value of its
/// `stats.time_elapsed`, the one part that differs from call to call and that its text
/// does not show.
mod kept {
    use std::cell::RefCell;

    use super::{Context, Kind};

    /// `body` as its text depends on it: the bytes before and after a prices answer's
    /// `stats.time_elapsed` value, or all of it and nothing.
    fn parts(kind: Kind, body: &[u8]) -> (&[u8], &[u8]) {
        let cut = match kind {
            Kind::Prices => crate::query::elapsed_span(body),
            _ => None,
        };
        match cut {
            Some(span) => (&body[..span.start], &body[span.end..]),
            None => (body, &[]),
        }
    }

    /// Texts kept per thread.
    pub const SLOTS: usize = 64;
    /// Largest answer whose text is kept.
    pub const MAX_BODY: usize = 32 * 1024;
    /// Most bytes kept per thread, answers and texts.
    pub const BUDGET: usize = 1 << 20;

    struct Slot {
        kind: Kind,
        at: Option<Box<str>>,
        data_date: Option<Box<str>>,
        /// The answer's [`parts`], one after the other.
        body: Box<[u8]>,
        /// Where the second part starts in `body`.
        split: usize,
        /// The text as written into a JSON string.
        text: Box<[u8]>,
    }

    impl Slot {
        fn holds(&self, kind: Kind, (head, tail): (&[u8], &[u8]), cx: Context<'_>) -> bool {
            let (kept_head, kept_tail) = self.body.split_at(self.split);
            self.kind == kind
                && self.at.as_deref() == cx.at
                && self.data_date.as_deref() == cx.data_date
                && kept_head == head
                && kept_tail == tail
        }

        fn bytes(&self) -> usize {
            self.body.len() + self.text.len()
        }
    }

    #[derive(Default)]
    struct Kept {
        slots: Vec<Option<Slot>>,
        bytes: usize,
        /// Which slot an answer takes (seeded per thread).
        hasher: ahash::RandomState,
    }

    thread_local! {
        static KEPT: RefCell<Kept> = RefCell::new(Kept::default());
    }

    /// Writes `body`'s text as [`super::write_success`] does, from the slot that
    /// holds it, or rendered and then kept.
    pub fn write(kind: Kind, body: &[u8], cx: Context<'_>, out: &mut Vec<u8>) -> bool {
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.slots.is_empty() {
                kept.slots.resize_with(SLOTS, || None);
            }
            let (head, tail) = parts(kind, body);
            let i = kept
                .hasher
                .hash_one((kind as u8, cx.at, cx.data_date, head, tail))
                as usize
                % SLOTS;
            if let Some(slot) = &kept.slots[i]
                && slot.holds(kind, (head, tail), cx)
            {
                out.extend_from_slice(&slot.text);
                return true;
            }
            let start = out.len();
            if !super::write_success(kind, body, cx, out) {
                return false;
            }
            let slot = Slot {
                kind,
                at: cx.at.map(Into::into),
                data_date: cx.data_date.map(Into::into),
                body: [head, tail].concat().into(),
                split: head.len(),
                text: out[start..].into(),
            };
            let freed = kept.slots[i].as_ref().map_or(0, Slot::bytes);
            if kept.bytes - freed + slot.bytes() <= BUDGET {
                kept.bytes = kept.bytes - freed + slot.bytes();
                kept.slots[i] = Some(slot);
            }
            true
        })
    }

    #[cfg(test)]
    pub fn held() -> (usize, usize) {
        KEPT.with(|kept| {
            let kept = kept.borrow();
            let n = kept.slots.iter().flatten().count();
            (n, kept.bytes)
        })
    }
}

fn render(kind: Kind, body: &[u8], cx: Context<'_>, out: &mut Sink<'_>) -> bool {
    let rendered = match kind {
        Kind::Cheapest => parse(body).map(|a| cheapest(&a, cx, out)),
        Kind::Prices => parse(body).map(|a| prices(&a, cx, out)),
        Kind::Registrars => parse(body).map(|a| registrars(&a, cx, out)),
        Kind::Overview => parse(body).map(|a| overview(&a, cx, out)),
        Kind::History => parse(body).map(|a| history(&a, cx, out)),
        Kind::Catalogue => parse(body).map(|a| catalogue(&a, out)),
        Kind::RegistrarList => parse(body).map(|a| registrar_list(&a, out)),
        Kind::Registrar => parse(body).map(|a| registrar(&a, out)),
        Kind::Audit => parse(body).map(|a| audit(&a, out)),
        Kind::Lookup => parse(body).map(|a| lookup(&a, cx, out)),
        Kind::Search => parse(body).map(|a| search(&a, cx, out)),
        Kind::Registration => parse(body).map(|a| registration(&a, out)),
        Kind::Status => parse(body).map(|a| status(&a, out)),
        Kind::Dns => parse(body).map(|a| dns(&a, out)),
        Kind::Availability => parse(body).map(|a| availability(&a, out)),
        Kind::BulkAvailability => parse(body).map(|a| bulk_availability(&a, out)),
        Kind::Tls => parse(body).map(|a| tls(&a, out)),
    };
    rendered.is_some()
}

#[derive(Deserialize)]
struct Problem<'a> {
    #[serde(borrow)]
    code: Option<Str<'a>>,
    #[serde(borrow)]
    detail: Option<Str<'a>>,
}

/// The one line of a problem document: `code: detail` (`error: ` for a body that is
/// not one).
pub fn problem(body: &[u8]) -> String {
    let mut buf = Vec::new();
    write_problem_line(parse(body).as_ref(), &mut Sink::new(&mut buf, false));
    String::from_utf8(buf).expect("the text is written from strings")
}

/// [`problem`]'s line into `out` as the inside of a JSON string; whether `body` was a
/// JSON document (a problem's).
pub fn write_problem(body: &[u8], out: &mut Vec<u8>) -> bool {
    let p: Option<Problem> = parse(body);
    write_problem_line(p.as_ref(), &mut Sink::new(out, true));
    p.is_some()
}

fn write_problem_line(p: Option<&Problem<'_>>, out: &mut Sink<'_>) {
    let code = p.and_then(|p| p.code.as_ref());
    let detail = p.and_then(|p| p.detail.as_ref());
    out.push_str(code.map_or("error", Str::as_str));
    out.push_str(": ");
    out.push_str(detail.map_or("", Str::as_str));
}

/// `text` as the inside of a JSON string.
pub fn write_escaped(text: &str, out: &mut Vec<u8>) {
    let mut sink = Sink::new(out, true);
    sink.push_str(text);
    // A trailing newline is the text's own here: kept.
    sink.flush();
}

/// Where a rendering writes: plain text, or the inside of a JSON string (escaped as it
/// is written, no second pass over the text). A newline is held back until more text
/// follows, so that a text never ends with one.
pub struct Sink<'a> {
    buf: &'a mut Vec<u8>,
    json: bool,
    newline: bool,
}

impl<'a> Sink<'a> {
    fn new(buf: &'a mut Vec<u8>, json: bool) -> Sink<'a> {
        Sink {
            buf,
            json,
            newline: false,
        }
    }

    /// Appends `s`: one pass over its bytes, which copies the runs between the bytes
    /// it must treat (a newline; in a JSON string a quote, a backslash and the other
    /// control characters, escaped).
    fn push_str(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b >= 0x20 && !(self.json && (b == b'"' || b == b'\\')) {
                continue;
            }
            if b != b'\n' && !self.json {
                // Another control character of a plain text: as it is.
                continue;
            }
            self.raw(&bytes[start..i]);
            start = i + 1;
            if b == b'\n' {
                self.flush();
                self.newline = true;
                continue;
            }
            self.flush();
            match b {
                b'"' => self.buf.extend_from_slice(b"\\\""),
                b'\\' => self.buf.extend_from_slice(b"\\\\"),
                b'\t' => self.buf.extend_from_slice(b"\\t"),
                b'\r' => self.buf.extend_from_slice(b"\\r"),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.buf.extend_from_slice(b"\\u00");
                    self.buf.push(HEX[usize::from(b >> 4)]);
                    self.buf.push(HEX[usize::from(b & 0xf)]);
                }
            }
        }
        self.raw(&bytes[start..]);
    }

    /// Appends `c`.
    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Writes the newline held back, if any.
    fn flush(&mut self) {
        if std::mem::take(&mut self.newline) {
            self.buf
                .extend_from_slice(if self.json { b"\\n" } else { b"\n" });
        }
    }

    /// Appends bytes that need no escaping and hold no newline.
    fn raw(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.flush();
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Appends an unsigned integer.
    fn uint(&mut self, n: u64) {
        self.raw(itoa::Buffer::new().format(n).as_bytes());
    }

    /// Appends `amount` as [`Cash::amount`] writes it, without the formatting
    /// machinery (the lines of a ranking write three or more each).
    fn amount(&mut self, cash: &Cash<'_>, amount: f64) {
        let scale = 10i64.pow(cash.decimals);
        let minor = (amount * scale as f64).round() as i64;
        if minor < 0 {
            self.raw(b"-");
        }
        let minor = minor.unsigned_abs();
        if cash.code == "USD" {
            self.raw(b"$");
        } else {
            self.raw(cash.code.as_bytes());
            self.raw(b" ");
        }
        let scale = scale as u64;
        self.uint(minor / scale);
        if cash.decimals > 0 {
            let frac = minor % scale;
            let mut digits = itoa::Buffer::new();
            // `frac + scale` is `1` and then `frac` padded to the decimals.
            let digits = digits.format(frac + scale).as_bytes();
            self.raw(b".");
            self.raw(&digits[1..]);
        }
    }

    /// Appends `amount`, or `n/a` for none.
    fn maybe(&mut self, cash: &Cash<'_>, amount: Option<f64>) {
        match amount {
            Some(v) => self.amount(cash, v),
            None => self.raw(b"n/a"),
        }
    }
}

impl fmt::Write for Sink<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// `body` parsed as `T`. The body is checked to be UTF-8 once, as a whole: parsed from
/// a `&str`, serde_json does not check each of its strings again (a cheapest answer has
/// some seventy, keys included).
fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Option<T> {
    serde_json::from_str(std::str::from_utf8(body).ok()?).ok()
}

// ---------------------------------------------------------------- the answers' parts

/// A string of the answer, borrowed unless it had escapes.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

impl Str<'_> {
    fn as_str(&self) -> &str {
        &self.0
    }

    /// The day of an ISO 8601 timestamp (its first ten characters).
    fn day(&self) -> &str {
        self.0.get(..10).unwrap_or(&self.0)
    }
}

impl fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A JSON object's members in the answer's order (TLDs in the order asked, registrars
/// in rank or request order).
#[derive(Debug)]
struct Entries<'a, V>(Vec<(Str<'a>, V)>);

impl<'de: 'a, 'a, V: Deserialize<'de>> Deserialize<'de> for Entries<'a, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a, V>(PhantomData<(Str<'a>, V)>);
        impl<'de: 'a, 'a, V: Deserialize<'de>> Visitor<'de> for Members<'a, V> {
            type Value = Entries<'a, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(Members(PhantomData))
    }
}

/// The `currency` object of an answer in another currency than USD.
#[derive(Debug, Deserialize)]
struct Currency<'a> {
    #[serde(borrow)]
    code: Str<'a>,
    per_usd: f64,
    #[serde(borrow)]
    rate_date: Str<'a>,
}

/// What was asked for and not found.
#[derive(Debug, Default, Deserialize)]
struct NotFound<'a> {
    #[serde(default, borrow)]
    tlds: Vec<Str<'a>>,
    #[serde(default, borrow)]
    registrars: Vec<Str<'a>>,
}

/// The terms of an offer besides its prices (each field present only where it
/// applies), and whether its price is stale.
#[derive(Debug, Default, Deserialize)]
struct Terms<'a> {
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

/// A coupon the registrar publishes: its code and the first-year price with it.
#[derive(Debug, Deserialize)]
struct CouponText<'a> {
    #[serde(borrow)]
    code: Str<'a>,
    register_price: f64,
}

/// The prices of a registrar's paid membership.
#[derive(Debug, Clone, Copy, Deserialize)]
struct MemberText {
    register: Option<f64>,
    renew: Option<f64>,
    transfer: Option<f64>,
}

/// An entry of a cheapest ranking (`cheapest`, `domains_lookup`).
#[derive(Debug, Deserialize)]
struct Ranked<'a> {
    rank: u64,
    #[serde(borrow)]
    registrar_name: Str<'a>,
    #[serde(borrow)]
    registrar_key: Str<'a>,
    register_price: f64,
    renew_price: f64,
    total_cost_5_year: f64,
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

/// The offer terms of a struct that has them as its own fields.
macro_rules! terms_of {
    ($e:expr) => {
        Terms {
            promotion: $e.promotion,
            regular_register_price: $e.regular_register_price,
            icann_fee: $e.icann_fee,
            icann_fee_included: $e.icann_fee_included,
            coupon: $e.coupon.as_ref().map(|c| CouponText {
                code: Str(Cow::Borrowed(c.code.as_str())),
                register_price: c.register_price,
            }),
            member_prices: $e.member_prices,
            stale: $e.stale,
            last_updated: $e
                .last_updated
                .as_ref()
                .map(|s| Str(Cow::Borrowed(s.as_str()))),
        }
    };
}

/// A TLD's ranking (`cheapest`'s results, a lookup's entry).
#[derive(Debug, Deserialize)]
struct Ranking<'a> {
    #[serde(borrow)]
    cheapest_register: Vec<Ranked<'a>>,
    registrar_count: u64,
    stale_count: Option<u64>,
}

/// A pick of the overview or the catalogue: one price and its registrar.
#[derive(Debug, Deserialize)]
struct Pick<'a> {
    price: f64,
    #[serde(borrow)]
    registrar_key: Str<'a>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

/// Average prices (null where a hidden price would show).
#[derive(Debug, Default, Deserialize)]
struct Averages {
    register: Option<f64>,
    renew: Option<f64>,
    transfer: Option<f64>,
}

/// A registrar's first and last dated feed version.
#[derive(Debug, Deserialize)]
struct Coverage<'a> {
    #[serde(borrow)]
    first: Str<'a>,
    #[serde(borrow)]
    last: Str<'a>,
}

// ---------------------------------------------------------------- writing

/// How amounts of one answer are written: its currency's code and minor unit.
struct Cash<'a> {
    code: &'a str,
    decimals: u32,
}

impl<'a> Cash<'a> {
    fn of(currency: Option<&'a Currency<'a>>) -> Cash<'a> {
        let code = currency.map_or("USD", |c| c.code.as_str());
        Cash {
            code,
            decimals: crate::price::minor_unit(code),
        }
    }

    /// `amount` written: `$9.08`, `EUR 8.45`, `JPY 1451`.
    fn amount(&self, amount: f64) -> Amount<'_> {
        Amount(self, amount)
    }

    /// `amount`, or `n/a` for none.
    fn maybe(&self, amount: Option<f64>) -> MaybeAmount<'_> {
        MaybeAmount(self, amount)
    }
}

struct Amount<'a>(&'a Cash<'a>, f64);

impl fmt::Display for Amount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Amount(cash, v) = self;
        let scale = 10i64.pow(cash.decimals);
        let minor = (v * scale as f64).round() as i64;
        let (sign, minor) = if minor < 0 {
            ("-", -minor)
        } else {
            ("", minor)
        };
        if cash.code == "USD" {
            write!(f, "{sign}$")?;
        } else {
            write!(f, "{sign}{} ", cash.code)?;
        }
        write!(f, "{}", minor / scale)?;
        if cash.decimals > 0 {
            write!(
                f,
                ".{:0width$}",
                minor % scale,
                width = cash.decimals as usize
            )?;
        }
        Ok(())
    }
}

struct MaybeAmount<'a>(&'a Cash<'a>, Option<f64>);

impl fmt::Display for MaybeAmount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(v) => self.0.amount(v).fmt(f),
            None => f.write_str("n/a"),
        }
    }
}

/// `, prices in USD` or `, prices in EUR (ECB rate of 2026-04-13: 0.855871 per USD)`.
fn write_currency(currency: Option<&Currency<'_>>, out: &mut Sink<'_>) {
    match currency {
        None => out.push_str(", prices in USD"),
        Some(c) => {
            let _ = write!(
                out,
                ", prices in {} (ECB rate of {}: {} per USD)",
                c.code, c.rate_date, c.per_usd
            );
        }
    }
}

/// `, data of 2026-08-22` or `, as of 2025-01-01` (a day asked for).
fn write_date(cx: Context<'_>, data_date: Option<&str>, out: &mut Sink<'_>) {
    if let Some(at) = cx.at {
        out.push_str(", as of ");
        out.push_str(at);
    } else if let Some(day) = data_date.or(cx.data_date) {
        out.push_str(", data of ");
        out.push_str(day);
    }
}

/// A registrar as a line names it: its key, and its name when that is not the key
/// in other letters (`namecom (Name.com)`, `sav`).
fn write_registrar(key: &str, name: Option<&str>, out: &mut Sink<'_>) {
    out.push_str(key);
    if let Some(name) = name
        && !name.eq_ignore_ascii_case(key)
    {
        out.push_str(" (");
        out.push_str(name);
        out.push_str(")");
    }
}

/// The terms after an offer's prices: `  (promotion: regular $12.98; ICANN fee $0.18
/// included; stale: price of 2025-03-22)`, nothing when none applies.
fn write_terms(terms: &Terms<'_>, cash: &Cash<'_>, out: &mut Sink<'_>) {
    let mut parts: Vec<String> = Vec::new();
    if terms.promotion {
        parts.push(match terms.regular_register_price {
            Some(regular) => format!("promotion: regular {}", cash.amount(regular)),
            None => "promotion".to_owned(),
        });
    }
    if let Some(fee) = terms.icann_fee {
        let how = match terms.icann_fee_included {
            Some(false) => "not included",
            _ => "included",
        };
        parts.push(format!("ICANN fee {} {how}", cash.amount(fee)));
    }
    if let Some(c) = &terms.coupon {
        parts.push(format!(
            "with code {}: register {}",
            c.code.as_str(),
            cash.amount(c.register_price)
        ));
    }
    if let Some(m) = terms.member_prices {
        let shown: Vec<String> = [
            ("register", m.register),
            ("renew", m.renew),
            ("transfer", m.transfer),
        ]
        .into_iter()
        .filter_map(|(what, p)| Some(format!("{what} {}", cash.amount(p?))))
        .collect();
        if !shown.is_empty() {
            parts.push(format!("members: {}", shown.join(" ")));
        }
    }
    if terms.stale {
        parts.push(match &terms.last_updated {
            Some(d) => format!("stale: price of {}", d.day()),
            None => "stale".to_owned(),
        });
    }
    if !parts.is_empty() {
        let _ = write!(out, "  ({})", parts.join("; "));
    }
}

/// One ranked offer: `1. spaceship  register $9.08  renew $10.18  5 years $49.80`.
fn write_ranked(e: &Ranked<'_>, cash: &Cash<'_>, indent: &str, out: &mut Sink<'_>) {
    out.push_str(indent);
    out.uint(e.rank);
    out.push_str(". ");
    write_registrar(
        e.registrar_key.as_str(),
        Some(e.registrar_name.as_str()),
        out,
    );
    out.push_str("  register ");
    out.amount(cash, e.register_price);
    out.push_str("  renew ");
    out.amount(cash, e.renew_price);
    out.push_str("  5 years ");
    out.amount(cash, e.total_cost_5_year);
    write_terms(&terms_of!(e), cash, out);
    out.push('\n');
}

/// `17 registrars sell it (showing 5; 4 with stale prices)`.
fn write_count(shown: usize, ranking: &Ranking<'_>, out: &mut Sink<'_>) {
    let total = ranking.registrar_count;
    out.uint(total);
    out.push_str(if total == 1 {
        " registrar sells it"
    } else {
        " registrars sell it"
    });
    let cut = (shown as u64) < total;
    if cut {
        out.push_str(" (showing ");
        out.uint(shown as u64);
    }
    if let Some(n) = ranking.stale_count {
        out.push_str(if cut { "; " } else { " (" });
        out.uint(n);
        out.push_str(" with stale prices");
    }
    if cut || ranking.stale_count.is_some() {
        out.push(')');
    }
}

fn write_not_found(nf: Option<&NotFound<'_>>, out: &mut Sink<'_>) {
    let Some(nf) = nf else { return };
    let list = |items: &[Str<'_>]| items.iter().map(Str::as_str).collect::<Vec<_>>().join(", ");
    if !nf.tlds.is_empty() {
        let _ = writeln!(out, "Unknown TLDs: {}", list(&nf.tlds));
    }
    if !nf.registrars.is_empty() {
        let _ = writeln!(out, "Unknown registrars: {}", list(&nf.registrars));
    }
}

// ---------------------------------------------------------------- cheapest

#[derive(Debug, Deserialize)]
struct CheapestAnswer<'a> {
    #[serde(borrow)]
    results: Entries<'a, Ranking<'a>>,
    #[serde(borrow)]
    meta: CheapestMeta<'a>,
}

#[derive(Debug, Deserialize)]
struct CheapestMeta<'a> {
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
    #[serde(borrow)]
    not_found: Option<NotFound<'a>>,
}

fn cheapest(a: &CheapestAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.meta.currency.as_ref());
    out.push_str("Cheapest registrars by first-year price");
    write_currency(a.meta.currency.as_ref(), out);
    write_date(cx, None, out);
    out.push('\n');
    for (tld, ranking) in &a.results.0 {
        out.push('.');
        out.push_str(tld.as_str());
        out.push_str(": ");
        write_count(ranking.cheapest_register.len(), ranking, out);
        out.push('\n');
        if ranking.cheapest_register.is_empty() {
            out.push_str("  no offer to show\n");
        }
        for e in &ranking.cheapest_register {
            write_ranked(e, &cash, "", out);
        }
    }
    write_not_found(a.meta.not_found.as_ref(), out);
}

// ---------------------------------------------------------------- prices

#[derive(Debug, Deserialize)]
struct PricesAnswer<'a> {
    #[serde(borrow)]
    results: Entries<'a, Entries<'a, Record<'a>>>,
    #[serde(borrow)]
    stats: PricesStats<'a>,
}

#[derive(Debug, Deserialize)]
struct PricesStats<'a> {
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
    #[serde(borrow)]
    not_found: Option<NotFound<'a>>,
}

/// A price record: register, renew and transfer (null when not offered).
#[derive(Debug, Deserialize)]
struct Record<'a> {
    register_price: Option<f64>,
    renew_price: Option<f64>,
    transfer_price: Option<f64>,
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

fn write_triple(
    register: Option<f64>,
    renew: Option<f64>,
    transfer: Option<f64>,
    cash: &Cash<'_>,
    out: &mut Sink<'_>,
) {
    out.push_str("  register ");
    out.maybe(cash, register);
    out.push_str("  renew ");
    out.maybe(cash, renew);
    out.push_str("  transfer ");
    out.maybe(cash, transfer);
}

fn prices(a: &PricesAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.stats.currency.as_ref());
    out.push_str("Prices by registrar");
    write_currency(a.stats.currency.as_ref(), out);
    write_date(cx, a.stats.last_updated.as_ref().map(|d| d.day()), out);
    out.push('\n');
    for (tld, records) in &a.results.0 {
        let _ = writeln!(out, ".{tld}:");
        if records.0.is_empty() {
            out.push_str("  no registrar asked for sells it\n");
        }
        for (key, r) in &records.0 {
            out.push_str("  ");
            out.push_str(key.as_str());
            write_triple(
                r.register_price,
                r.renew_price,
                r.transfer_price,
                &cash,
                out,
            );
            write_terms(&terms_of!(r), &cash, out);
            out.push('\n');
        }
    }
    write_not_found(a.stats.not_found.as_ref(), out);
}

// ---------------------------------------------------------------- registrars of a TLD

#[derive(Debug, Deserialize)]
struct RegistrarsAnswer<'a> {
    #[serde(borrow)]
    tld: Str<'a>,
    registrar_count: u64,
    #[serde(borrow)]
    registrars: Vec<Seller<'a>>,
    #[serde(borrow)]
    message: Option<Str<'a>>,
    stale_count: Option<u64>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
}

#[derive(Debug, Deserialize)]
struct Seller<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    key: Str<'a>,
    #[serde(borrow)]
    website_url: Str<'a>,
    prices: Option<Averages>,
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

fn registrars(a: &RegistrarsAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.currency.as_ref());
    let _ = write!(out, "Registrars of .{} by first-year price", a.tld);
    write_currency(a.currency.as_ref(), out);
    write_date(cx, None, out);
    out.push('\n');
    let ranking = Ranking {
        cheapest_register: Vec::new(),
        registrar_count: a.registrar_count,
        stale_count: a.stale_count,
    };
    write_count(a.registrars.len(), &ranking, out);
    out.push('\n');
    for (i, s) in a.registrars.iter().enumerate() {
        let _ = write!(out, "{}. ", i + 1);
        write_registrar(s.key.as_str(), Some(s.name.as_str()), out);
        match &s.prices {
            Some(p) => write_triple(p.register, p.renew, p.transfer, &cash, out),
            None => {
                let _ = write!(out, "  {}", s.website_url);
            }
        }
        write_terms(&terms_of!(s), &cash, out);
        out.push('\n');
    }
    if let Some(m) = &a.message {
        let _ = writeln!(out, "{m}");
    }
}

// ---------------------------------------------------------------- overview

#[derive(Debug, Deserialize)]
struct OverviewAnswer<'a> {
    #[serde(borrow)]
    tld: Str<'a>,
    #[serde(borrow)]
    unicode: Str<'a>,
    #[serde(rename = "type", borrow)]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    manager: Option<Str<'a>>,
    free: bool,
    registrar_count: u64,
    #[serde(default)]
    avg_prices: Averages,
    #[serde(borrow)]
    cheapest_register: Option<Pick<'a>>,
    #[serde(borrow)]
    lowest_renew: Option<Pick<'a>>,
    #[serde(borrow)]
    lowest_5_year: Option<Pick<'a>>,
    stale_count: Option<u64>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
    #[serde(default, borrow)]
    members_only: Vec<Str<'a>>,
}

/// `.рф (xn--p1ai)` for a TLD whose Unicode form differs, `.com` otherwise.
fn write_tld(tld: &str, unicode: &str, out: &mut Sink<'_>) {
    if unicode != tld {
        let _ = write!(out, ".{unicode} (.{tld})");
    } else {
        let _ = write!(out, ".{tld}");
    }
}

fn write_pick(what: &str, pick: Option<&Pick<'_>>, cash: &Cash<'_>, out: &mut Sink<'_>) {
    let _ = write!(out, "{what}: ");
    match pick {
        Some(p) => {
            let _ = write!(out, "{} at {}", cash.amount(p.price), p.registrar_key);
            let terms = Terms {
                stale: p.stale,
                last_updated: p
                    .last_updated
                    .as_ref()
                    .map(|s| Str(Cow::Borrowed(s.as_str()))),
                ..Terms::default()
            };
            write_terms(&terms, cash, out);
        }
        None => out.push_str("n/a"),
    }
    out.push('\n');
}

fn write_members_only(fields: &[Str<'_>], out: &mut Sink<'_>) {
    if !fields.is_empty() {
        let names: Vec<&str> = fields.iter().map(Str::as_str).collect();
        let _ = writeln!(out, "Not shown on this plan (null): {}", names.join(", "));
    }
}

fn overview(a: &OverviewAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.currency.as_ref());
    write_tld(a.tld.as_str(), a.unicode.as_str(), out);
    let mut facts = Vec::new();
    if let Some(kind) = &a.kind {
        facts.push(format!("{kind} TLD"));
    }
    if let Some(manager) = &a.manager {
        facts.push(format!("managed by {manager}"));
    }
    if a.free {
        facts.push("free on every plan".to_owned());
    }
    if !facts.is_empty() {
        let _ = write!(out, " ({})", facts.join("; "));
    }
    write_currency(a.currency.as_ref(), out);
    write_date(cx, None, out);
    out.push('\n');
    let ranking = Ranking {
        cheapest_register: Vec::new(),
        registrar_count: a.registrar_count,
        stale_count: a.stale_count,
    };
    write_count(a.registrar_count as usize, &ranking, out);
    out.push('\n');
    if a.registrar_count > 0 {
        write_pick(
            "Cheapest registration",
            a.cheapest_register.as_ref(),
            &cash,
            out,
        );
        write_pick("Lowest renewal", a.lowest_renew.as_ref(), &cash, out);
        write_pick("Lowest 5-year cost", a.lowest_5_year.as_ref(), &cash, out);
        out.push_str("Average:");
        let p = &a.avg_prices;
        write_triple(p.register, p.renew, p.transfer, &cash, out);
        out.push('\n');
    }
    write_members_only(&a.members_only, out);
}

// ---------------------------------------------------------------- history

#[derive(Debug, Deserialize)]
struct HistoryAnswer<'a> {
    #[serde(borrow)]
    tld: Str<'a>,
    #[serde(borrow)]
    from: Option<Str<'a>>,
    #[serde(borrow)]
    to: Option<Str<'a>>,
    #[serde(borrow)]
    history: Entries<'a, RegistrarHistory<'a>>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
    #[serde(borrow)]
    not_found: Option<NotFound<'a>>,
}

#[derive(Debug, Deserialize)]
struct RegistrarHistory<'a> {
    #[serde(borrow)]
    coverage: Option<Coverage<'a>>,
    #[serde(borrow)]
    price_at_from: Option<Change<'a>>,
    #[serde(borrow)]
    changes: Vec<Change<'a>>,
}

#[derive(Debug, Deserialize)]
struct Change<'a> {
    #[serde(borrow)]
    date: Str<'a>,
    register_price: Option<f64>,
    renew_price: Option<f64>,
    transfer_price: Option<f64>,
}

fn write_change(c: &Change<'_>, cash: &Cash<'_>, out: &mut Sink<'_>) {
    if c.register_price.is_none() && c.renew_price.is_none() && c.transfer_price.is_none() {
        out.push_str("  no longer listed");
    } else {
        write_triple(c.register_price, c.renew_price, c.transfer_price, cash, out);
    }
}

fn history(a: &HistoryAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.currency.as_ref());
    let _ = write!(
        out,
        "Price history of .{} from {} to {}",
        a.tld,
        a.from.as_ref().map_or("the first record", Str::as_str),
        a.to.as_ref().map_or("the data date", Str::as_str)
    );
    write_currency(a.currency.as_ref(), out);
    write_date(cx, None, out);
    out.push('\n');
    for (key, h) in &a.history.0 {
        out.push_str(key.as_str());
        if let Some(c) = &h.coverage {
            let _ = write!(out, " (prices recorded {} to {})", c.first, c.last);
        }
        out.push_str(":\n");
        if let (Some(p), Some(from)) = (&h.price_at_from, &a.from) {
            let _ = write!(out, "  {from} (in effect since {})", p.date);
            write_change(p, &cash, out);
            out.push('\n');
        }
        if h.changes.is_empty() {
            out.push_str("  no change\n");
        }
        for c in &h.changes {
            let _ = write!(out, "  {}", c.date);
            write_change(c, &cash, out);
            out.push('\n');
        }
    }
    write_not_found(a.not_found.as_ref(), out);
}

// ---------------------------------------------------------------- catalogue

#[derive(Debug, Deserialize)]
struct CatalogueAnswer<'a> {
    #[serde(borrow)]
    tlds: Vec<CatalogueEntry<'a>>,
    #[serde(borrow)]
    meta: PageMeta<'a>,
}

#[derive(Debug, Deserialize)]
struct CatalogueEntry<'a> {
    #[serde(borrow)]
    tld: Str<'a>,
    #[serde(borrow)]
    unicode: Str<'a>,
    #[serde(rename = "type", borrow)]
    kind: Option<Str<'a>>,
    registrar_count: u64,
    avg_register_price: Option<f64>,
    #[serde(borrow)]
    cheapest_register: Option<Pick<'a>>,
    #[serde(default, borrow)]
    members_only: Vec<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct PageMeta<'a> {
    total: u64,
    #[serde(borrow)]
    next_cursor: Option<Str<'a>>,
    #[serde(borrow)]
    sort: Option<Str<'a>>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
}

fn write_next(meta: &PageMeta<'_>, shown: usize, out: &mut Sink<'_>) {
    let _ = write!(out, "{shown} of {}", meta.total);
    match &meta.next_cursor {
        Some(c) => {
            let _ = writeln!(out, "; next page: cursor {c}");
        }
        None => out.push_str("; the last page\n"),
    }
}

fn catalogue(a: &CatalogueAnswer<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.meta.currency.as_ref());
    let _ = write!(
        out,
        "TLDs by {}",
        a.meta.sort.as_ref().map_or("name", Str::as_str)
    );
    write_currency(a.meta.currency.as_ref(), out);
    out.push('\n');
    for e in &a.tlds {
        write_tld(e.tld.as_str(), e.unicode.as_str(), out);
        if let Some(kind) = &e.kind {
            let _ = write!(out, "  {kind}");
        }
        if e.registrar_count == 0 {
            out.push_str("  not sold\n");
            continue;
        }
        let _ = write!(out, "  {} registrars", e.registrar_count);
        match &e.cheapest_register {
            Some(p) => {
                let _ = write!(
                    out,
                    "  cheapest {} at {}",
                    cash.amount(p.price),
                    p.registrar_key
                );
            }
            None => out.push_str("  cheapest n/a"),
        }
        let _ = write!(out, "  average {}", cash.maybe(e.avg_register_price));
        if !e.members_only.is_empty() {
            out.push_str("  (prices not shown on this plan)");
        }
        out.push('\n');
    }
    write_next(&a.meta, a.tlds.len(), out);
}

// ---------------------------------------------------------------- registrars

#[derive(Debug, Deserialize)]
struct RegistrarListAnswer<'a> {
    #[serde(borrow)]
    registrars: Vec<RegistrarHead<'a>>,
    total: u64,
}

#[derive(Debug, Deserialize)]
struct RegistrarHead<'a> {
    #[serde(borrow)]
    key: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    homepage: Option<Str<'a>>,
    tlds_sold: u64,
    cheapest_in: u64,
    #[serde(borrow)]
    coverage: Option<Coverage<'a>>,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

fn write_head(r: &RegistrarHead<'_>, out: &mut Sink<'_>) {
    write_registrar(r.key.as_str(), Some(r.name.as_str()), out);
    let _ = write!(
        out,
        "  sells {} TLDs, cheapest for {}",
        r.tlds_sold, r.cheapest_in
    );
    if let Some(c) = &r.coverage {
        let _ = write!(out, "; prices recorded {} to {}", c.first, c.last);
    }
    if let Some(h) = &r.homepage {
        let _ = write!(out, "; {h}");
    }
}

fn registrar_list(a: &RegistrarListAnswer<'_>, out: &mut Sink<'_>) {
    let _ = writeln!(out, "{} registrars (key, then name):", a.total);
    for r in &a.registrars {
        write_head(r, out);
        out.push('\n');
    }
}

#[derive(Debug, Deserialize)]
struct RegistrarAnswer<'a> {
    #[serde(flatten, borrow)]
    head: RegistrarHead<'a>,
    #[serde(borrow)]
    prices: Vec<ListedPrice<'a>>,
    #[serde(borrow)]
    meta: PageMeta<'a>,
}

#[derive(Debug, Deserialize)]
struct ListedPrice<'a> {
    #[serde(borrow)]
    tld: Str<'a>,
    register_price: Option<f64>,
    renew_price: Option<f64>,
    transfer_price: Option<f64>,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
    #[serde(default, borrow)]
    members_only: Vec<Str<'a>>,
}

fn registrar(a: &RegistrarAnswer<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.meta.currency.as_ref());
    write_head(&a.head, out);
    out.push_str("\nIts price list by TLD");
    write_currency(a.meta.currency.as_ref(), out);
    let listed = a.head.last_updated.as_ref().map(Str::day);
    if let Some(day) = listed {
        let _ = write!(out, ", prices of {day} unless noted");
    }
    out.push('\n');
    for p in &a.prices {
        let _ = write!(out, ".{}", p.tld);
        write_triple(
            p.register_price,
            p.renew_price,
            p.transfer_price,
            &cash,
            out,
        );
        if let Some(d) = &p.last_updated
            && Some(d.day()) != listed
        {
            let _ = write!(out, "  (price of {})", d.day());
        }
        if !p.members_only.is_empty() {
            out.push_str("  (not shown on this plan)");
        }
        out.push('\n');
    }
    write_next(&a.meta, a.prices.len(), out);
}

// ---------------------------------------------------------------- portfolio audit

#[derive(Debug, Deserialize)]
struct AuditAnswer<'a> {
    #[serde(borrow)]
    domains: Vec<AuditDomain<'a>>,
    totals: AuditSums,
    #[serde(borrow)]
    meta: AuditMeta<'a>,
}

#[derive(Debug, Deserialize)]
struct AuditMeta<'a> {
    entries: u64,
    distinct: u64,
    #[serde(borrow)]
    data_date: Option<Str<'a>>,
    #[serde(borrow)]
    currency: Option<Currency<'a>>,
}

#[derive(Debug, Deserialize)]
struct AuditSums {
    domains: u64,
    priced_domains: u64,
    current_yearly: f64,
    optimal_yearly: f64,
    savings_per_year: f64,
    savings_5_year: f64,
}

#[derive(Debug, Deserialize)]
struct AuditDomain<'a> {
    #[serde(borrow)]
    input: Str<'a>,
    #[serde(borrow)]
    domain: Option<Str<'a>>,
    #[serde(borrow)]
    registrar_key: Option<Str<'a>>,
    #[serde(borrow)]
    expires: Option<Str<'a>>,
    current_price: Option<f64>,
    #[serde(borrow)]
    price_source: Option<Str<'a>>,
    #[serde(borrow)]
    cheapest_renewal: Option<AuditOffer<'a>>,
    #[serde(borrow)]
    best_transfer: Option<AuditOffer<'a>>,
    #[serde(borrow)]
    recommendation: Option<Str<'a>>,
    optimal_price: Option<f64>,
    savings_per_year: Option<f64>,
    savings_5_year: Option<f64>,
    #[serde(default, borrow)]
    flags: Vec<Str<'a>>,
    #[serde(borrow)]
    error: Option<Str<'a>>,
    #[serde(borrow)]
    detail: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct AuditOffer<'a> {
    #[serde(borrow)]
    registrar_key: Str<'a>,
    transfer_price: Option<f64>,
    renew_price: f64,
    total_cost_5_year: Option<f64>,
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

fn audit(a: &AuditAnswer<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(a.meta.currency.as_ref());
    let _ = write!(
        out,
        "Portfolio audit of {} entr{} ({} distinct)",
        a.meta.entries,
        if a.meta.entries == 1 { "y" } else { "ies" },
        a.meta.distinct
    );
    write_currency(a.meta.currency.as_ref(), out);
    write_date(
        Context::default(),
        a.meta.data_date.as_ref().map(Str::as_str),
        out,
    );
    out.push('\n');
    for d in &a.domains {
        let Some(domain) = &d.domain else {
            let _ = writeln!(
                out,
                "{}: {}: {}",
                d.input,
                d.error.as_ref().map_or("invalid_name", Str::as_str),
                d.detail.as_ref().map_or("", Str::as_str)
            );
            continue;
        };
        out.push_str(domain.as_str());
        if d.input.as_str() != domain.as_str() {
            let _ = write!(out, " (given as {})", d.input);
        }
        out.push_str(": ");
        match &d.registrar_key {
            Some(k) => {
                let _ = write!(out, "at {k}");
            }
            None => out.push_str("registrar not given"),
        }
        if let Some(p) = d.current_price {
            let _ = write!(out, ", pays {}", cash.amount(p));
            match d.price_source.as_ref().map(Str::as_str) {
                Some("stated") => out.push_str(" (as stated)"),
                Some("registrar") => out.push_str(" (its list price)"),
                _ => {}
            }
        }
        if let Some(e) = &d.expires {
            let _ = write!(out, ", expires {e}");
        }
        match &d.cheapest_renewal {
            Some(o) => {
                let _ = write!(
                    out,
                    "; cheapest renewal {} at {}",
                    cash.amount(o.renew_price),
                    o.registrar_key
                );
                write_terms(&terms_of!(o), &cash, out);
            }
            None => out.push_str("; no renewal offer"),
        }
        if let Some(o) = &d.best_transfer {
            let _ = write!(
                out,
                "; best transfer {}: transfer {}  renew {}  5 years {}",
                o.registrar_key,
                cash.maybe(o.transfer_price),
                cash.amount(o.renew_price),
                cash.maybe(o.total_cost_5_year)
            );
            write_terms(&terms_of!(o), &cash, out);
        }
        if let Some(r) = &d.recommendation {
            let _ = write!(out, "; recommendation: {r}");
            if let Some(o) = d.optimal_price {
                let _ = write!(out, " at {} a year", cash.amount(o));
            }
        }
        if let (Some(y), Some(f)) = (d.savings_per_year, d.savings_5_year) {
            let _ = write!(
                out,
                "; saves {} a year, {} over 5 years",
                cash.amount(y),
                cash.amount(f)
            );
        }
        if !d.flags.is_empty() {
            let flags: Vec<&str> = d.flags.iter().map(Str::as_str).collect();
            let _ = write!(out, "  [{}]", flags.join(", "));
        }
        out.push('\n');
    }
    let t = &a.totals;
    let _ = writeln!(
        out,
        "Totals: {} domain{}, {} with a known price: {} a year now, {} at best; saves {} a year, {} over 5 years",
        t.domains,
        if t.domains == 1 { "" } else { "s" },
        t.priced_domains,
        cash.amount(t.current_yearly),
        cash.amount(t.optimal_yearly),
        cash.amount(t.savings_per_year),
        cash.amount(t.savings_5_year)
    );
}

// ---------------------------------------------------------------- lookup and search

#[derive(Debug, Deserialize)]
struct LookupAnswer<'a> {
    #[serde(borrow)]
    results: Vec<LookupEntry<'a>>,
}

#[derive(Debug, Deserialize)]
struct LookupEntry<'a> {
    #[serde(borrow)]
    input: Str<'a>,
    #[serde(borrow)]
    domain: Option<Str<'a>>,
    #[serde(borrow)]
    suffix: Option<Str<'a>>,
    #[serde(default, borrow)]
    cheapest_register: Vec<Ranked<'a>>,
    registrar_count: Option<u64>,
    stale_count: Option<u64>,
    #[serde(borrow)]
    error: Option<Str<'a>>,
    #[serde(borrow)]
    detail: Option<Str<'a>>,
}

fn lookup(a: &LookupAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(None);
    out.push_str("Cheapest registrars of each domain's suffix by first-year price");
    write_currency(None, out);
    write_date(cx, None, out);
    out.push('\n');
    for e in &a.results {
        let (Some(domain), None) = (&e.domain, &e.error) else {
            let _ = write!(
                out,
                "{}: {}",
                e.input,
                e.error.as_ref().map_or("error", Str::as_str)
            );
            if let Some(d) = &e.detail {
                let _ = write!(out, ": {d}");
            }
            out.push('\n');
            continue;
        };
        let _ = write!(
            out,
            "{domain} (suffix .{}",
            e.suffix.as_ref().map_or("", Str::as_str)
        );
        if e.input.as_str() != domain.as_str() {
            let _ = write!(out, ", given as {}", e.input);
        }
        out.push_str("): ");
        let ranking = Ranking {
            cheapest_register: Vec::new(),
            registrar_count: e.registrar_count.unwrap_or_default(),
            stale_count: e.stale_count,
        };
        write_count(e.cheapest_register.len(), &ranking, out);
        out.push('\n');
        for r in &e.cheapest_register {
            write_ranked(r, &cash, "  ", out);
        }
    }
}

#[derive(Debug, Deserialize)]
struct SearchAnswer<'a> {
    #[serde(borrow)]
    query: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    results: Vec<Candidate<'a>>,
    #[serde(borrow)]
    meta: SearchMeta<'a>,
}

#[derive(Debug, Deserialize)]
struct SearchMeta<'a> {
    #[serde(borrow)]
    availability: Option<Str<'a>>,
    #[serde(borrow)]
    requested_suffix: Option<RequestedSuffix<'a>>,
}

#[derive(Debug, Deserialize)]
struct RequestedSuffix<'a> {
    #[serde(borrow)]
    suffix: Option<Str<'a>>,
    #[serde(borrow)]
    error: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Candidate<'a> {
    #[serde(borrow)]
    domain: Str<'a>,
    #[serde(borrow)]
    registrar_key: Str<'a>,
    register_price: f64,
    renew_price: f64,
    total_cost_5_year: f64,
    #[serde(default)]
    renewal_trap: bool,
    #[serde(borrow)]
    availability: Option<Str<'a>>,
    #[serde(borrow)]
    availability_reason: Option<Str<'a>>,
    #[serde(default)]
    promotion: bool,
    regular_register_price: Option<f64>,
    icann_fee: Option<f64>,
    icann_fee_included: Option<bool>,
    #[serde(borrow)]
    coupon: Option<CouponText<'a>>,
    member_prices: Option<MemberText>,
    #[serde(default)]
    stale: bool,
    #[serde(borrow)]
    last_updated: Option<Str<'a>>,
}

fn search(a: &SearchAnswer<'_>, cx: Context<'_>, out: &mut Sink<'_>) {
    let cash = Cash::of(None);
    let _ = write!(out, "Domain names for \"{}\" ({})", a.query, a.name);
    write_currency(None, out);
    write_date(cx, None, out);
    out.push('\n');
    for (i, c) in a.results.iter().enumerate() {
        let _ = write!(
            out,
            "{}. {}  at {}  register {}  renew {}  5 years {}",
            i + 1,
            c.domain,
            c.registrar_key,
            cash.amount(c.register_price),
            cash.amount(c.renew_price),
            cash.amount(c.total_cost_5_year)
        );
        if c.renewal_trap {
            out.push_str("  renewal trap");
        }
        if let Some(av) = &c.availability
            && (av.as_str() != "unknown" || c.availability_reason.is_some())
        {
            let _ = write!(out, "  availability: {av}");
            if let Some(why) = &c.availability_reason {
                let _ = write!(out, " ({why})");
            }
        }
        write_terms(&terms_of!(c), &cash, out);
        out.push('\n');
    }
    if a.results.is_empty() {
        out.push_str("no candidate\n");
    }
    if let Some(RequestedSuffix {
        suffix: Some(s),
        error: Some(e),
    }) = &a.meta.requested_suffix
    {
        let _ = writeln!(out, "The suffix asked for, .{s}: {e}");
    }
    if let Some(av) = &a.meta.availability {
        let _ = writeln!(out, "Availability: {av}");
    }
}

// ---------------------------------------------------------------- live lookups

/// Where a live answer came from.
#[derive(Debug, Deserialize)]
struct Source<'a> {
    #[serde(borrow)]
    protocol: Str<'a>,
    #[serde(borrow)]
    server: Str<'a>,
}

/// `(RDAP, https://…), learnt 2026-12-02T14:20:24.016Z`.
fn write_source(source: &Source<'_>, learnt_at: Option<&Str<'_>>, out: &mut Sink<'_>) {
    let _ = write!(
        out,
        " ({}, {})",
        source.protocol.as_str().to_ascii_uppercase(),
        source.server
    );
    if let Some(at) = learnt_at {
        let _ = write!(out, ", learnt {at}");
    }
}

fn list(items: &[Str<'_>]) -> String {
    if items.is_empty() {
        return "none".to_owned();
    }
    items.iter().map(Str::as_str).collect::<Vec<_>>().join(", ")
}

#[derive(Debug, Deserialize)]
struct RegistryAnswer<'a> {
    #[serde(borrow)]
    domain: Str<'a>,
    registered: Option<bool>,
    #[serde(default)]
    reserved: bool,
    #[serde(borrow)]
    registration: Option<Registration<'a>>,
    #[serde(borrow)]
    raw: Option<Str<'a>>,
    #[serde(borrow)]
    source: Source<'a>,
    #[serde(borrow)]
    learnt_at: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Registration<'a> {
    #[serde(borrow)]
    registrar: Option<RegistrarOfRecord<'a>>,
    #[serde(borrow)]
    created: Option<Str<'a>>,
    #[serde(borrow)]
    updated: Option<Str<'a>>,
    #[serde(borrow)]
    expires: Option<Str<'a>>,
    #[serde(default, borrow)]
    statuses: Vec<Str<'a>>,
    #[serde(default, borrow)]
    nameservers: Vec<Str<'a>>,
    dnssec: Option<Dnssec>,
    #[serde(borrow)]
    registrant: Option<Registrant<'a>>,
    #[serde(default, borrow)]
    redacted: Vec<Redacted<'a>>,
}

#[derive(Debug, Deserialize)]
struct RegistrarOfRecord<'a> {
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    iana_id: Option<Str<'a>>,
    #[serde(borrow)]
    abuse_email: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Dnssec {
    #[serde(default)]
    delegation_signed: bool,
}

#[derive(Debug, Deserialize)]
struct Registrant<'a> {
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    organization: Option<Str<'a>>,
    #[serde(borrow)]
    country: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Redacted<'a> {
    #[serde(borrow)]
    field: Str<'a>,
}

fn registration(a: &RegistryAnswer<'_>, out: &mut Sink<'_>) {
    out.push_str(a.domain.as_str());
    out.push_str(match (a.registered, a.reserved) {
        (Some(true), true) => ": reserved by the registry",
        (Some(true), false) => ": registered",
        (Some(false), _) => ": not registered",
        (None, _) => ": the registry's answer was not recognised",
    });
    write_source(&a.source, a.learnt_at.as_ref(), out);
    out.push('\n');
    if let Some(r) = &a.registration {
        if let Some(registrar) = &r.registrar {
            let _ = write!(
                out,
                "Registrar: {}",
                registrar.name.as_ref().map_or("not given", Str::as_str)
            );
            if let Some(id) = &registrar.iana_id {
                let _ = write!(out, " (IANA ID {id})");
            }
            if let Some(abuse) = &registrar.abuse_email {
                let _ = write!(out, ", abuse contact {abuse}");
            }
            out.push('\n');
        }
        let day = |d: &Option<Str<'_>>| d.as_ref().map_or("n/a", |d| d.day()).to_owned();
        let _ = writeln!(
            out,
            "Created {}, updated {}, expires {}",
            day(&r.created),
            day(&r.updated),
            day(&r.expires)
        );
        let _ = writeln!(out, "Statuses: {}", list(&r.statuses));
        let _ = writeln!(out, "Name servers: {}", list(&r.nameservers));
        if let Some(d) = &r.dnssec {
            let signed = if d.delegation_signed {
                "signed"
            } else {
                "not signed"
            };
            let _ = writeln!(out, "DNSSEC: the delegation is {signed}");
        }
        if let Some(who) = &r.registrant {
            let parts: Vec<&str> = [&who.name, &who.organization, &who.country]
                .into_iter()
                .flatten()
                .map(Str::as_str)
                .collect();
            if !parts.is_empty() {
                let _ = writeln!(out, "Registrant: {}", parts.join(", "));
            }
        }
        if !r.redacted.is_empty() {
            let fields: Vec<&str> = r.redacted.iter().map(|f| f.field.as_str()).collect();
            let _ = writeln!(out, "Redacted: {}", fields.join(", "));
        }
    }
    if let Some(raw) = &a.raw {
        let _ = writeln!(out, "The answer as it came:\n{raw}");
    }
}

#[derive(Debug, Deserialize)]
struct StatusAnswer<'a> {
    #[serde(borrow)]
    domain: Str<'a>,
    registered: Option<bool>,
    #[serde(borrow)]
    statuses: Vec<EppStatus<'a>>,
    grace_period: bool,
    on_hold: bool,
    pending_delete: bool,
    #[serde(borrow)]
    source: Source<'a>,
    #[serde(borrow)]
    learnt_at: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct EppStatus<'a> {
    #[serde(borrow)]
    code: Str<'a>,
    #[serde(borrow)]
    meaning: Option<Str<'a>>,
    #[serde(borrow)]
    set_by: Option<Str<'a>>,
    #[serde(borrow)]
    state: Option<Str<'a>>,
}

fn status(a: &StatusAnswer<'_>, out: &mut Sink<'_>) {
    out.push_str(a.domain.as_str());
    out.push_str(match a.registered {
        Some(true) => ": registered",
        Some(false) => ": not registered",
        None => ": the registry's answer was not recognised",
    });
    write_source(&a.source, a.learnt_at.as_ref(), out);
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        out,
        "\nOn hold: {}; in a grace period: {}; pending delete: {}",
        yes(a.on_hold),
        yes(a.grace_period),
        yes(a.pending_delete)
    );
    if a.statuses.is_empty() {
        out.push_str("No status codes\n");
    }
    for st in &a.statuses {
        out.push_str(st.code.as_str());
        let mut how = Vec::new();
        if let Some(by) = &st.set_by {
            how.push(format!("set by the {by}"));
        }
        if let Some(state) = &st.state {
            how.push(state.as_str().replace('_', " "));
        }
        if !how.is_empty() {
            let _ = write!(out, " ({})", how.join("; "));
        }
        if let Some(m) = &st.meaning {
            let _ = write!(out, ": {m}");
        }
        out.push('\n');
    }
}

#[derive(Debug, Deserialize)]
struct DnsAnswer<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    status: Str<'a>,
    #[serde(borrow)]
    records: Vec<RecordSet<'a>>,
    #[serde(borrow)]
    resolver: Str<'a>,
    #[serde(borrow)]
    dnssec: Option<DnssecVerdict<'a>>,
    #[serde(borrow)]
    learnt_at: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct DnssecVerdict<'a> {
    #[serde(borrow)]
    verdict: Str<'a>,
    resolver_validates: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct RecordSet<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    status: Str<'a>,
    ttl: Option<u64>,
    #[serde(borrow)]
    records: Vec<DnsRecord<'a>>,
    #[serde(borrow)]
    dnssec: Option<Str<'a>>,
    #[serde(borrow)]
    error: Option<Str<'a>>,
}

/// A record of any type: the fields its type has (docs/API.md's DnsRecordSet).
#[derive(Debug, Deserialize)]
struct DnsRecord<'a> {
    #[serde(borrow)]
    address: Option<Str<'a>>,
    preference: Option<u64>,
    #[serde(borrow)]
    exchange: Option<Str<'a>>,
    #[serde(borrow)]
    host: Option<Str<'a>>,
    #[serde(borrow)]
    text: Option<Str<'a>>,
    flags: Option<u64>,
    #[serde(borrow)]
    tag: Option<Str<'a>>,
    #[serde(borrow)]
    value: Option<Str<'a>>,
    #[serde(borrow)]
    mname: Option<Str<'a>>,
    #[serde(borrow)]
    rname: Option<Str<'a>>,
    serial: Option<u64>,
}

fn write_record(r: &DnsRecord<'_>, out: &mut Sink<'_>) {
    if let Some(a) = &r.address {
        out.push_str(a.as_str());
    } else if let (Some(p), Some(x)) = (r.preference, &r.exchange) {
        let _ = write!(out, "{p} {x}");
    } else if let Some(h) = &r.host {
        out.push_str(h.as_str());
    } else if let Some(t) = &r.text {
        let _ = write!(out, "{:?}", t.as_str());
    } else if let (Some(f), Some(t), Some(v)) = (r.flags, &r.tag, &r.value) {
        let _ = write!(out, "{f} {t} {v:?}", v = v.as_str());
    } else if let (Some(m), Some(n)) = (&r.mname, &r.rname) {
        let _ = write!(out, "{m} {n} serial {}", r.serial.unwrap_or_default());
    } else {
        out.push('?');
    }
}

fn dns(a: &DnsAnswer<'_>, out: &mut Sink<'_>) {
    let _ = write!(out, "{}: {} ({}", a.name, a.status, a.resolver);
    if let Some(at) = &a.learnt_at {
        let _ = write!(out, ", learnt {at}");
    }
    out.push(')');
    if let Some(d) = &a.dnssec {
        let _ = write!(out, "; DNSSEC: {}", d.verdict);
        match d.resolver_validates {
            Some(true) => out.push_str(" (the resolver validates)"),
            Some(false) => out.push_str(" (the resolver does not validate)"),
            None => {}
        }
    }
    out.push('\n');
    for set in &a.records {
        out.push_str(set.kind.as_str());
        if let Some(ttl) = set.ttl {
            let _ = write!(out, " (ttl {ttl})");
        }
        out.push_str(": ");
        if set.records.is_empty() {
            out.push_str(set.status.as_str());
            if let Some(e) = &set.error {
                let _ = write!(out, " ({e})");
            }
        }
        for (i, r) in set.records.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            write_record(r, out);
        }
        if let Some(v) = &set.dnssec {
            let _ = write!(out, "  [DNSSEC {v}]");
        }
        out.push('\n');
    }
}

#[derive(Debug, Deserialize)]
struct AvailabilityAnswer<'a> {
    #[serde(borrow)]
    domain: Str<'a>,
    #[serde(borrow)]
    availability: Str<'a>,
    #[serde(borrow)]
    reason: Str<'a>,
    #[serde(borrow)]
    evidence: Vec<Evidence<'a>>,
}

#[derive(Debug, Deserialize)]
struct Evidence<'a> {
    #[serde(borrow)]
    source: Str<'a>,
    #[serde(borrow)]
    upstream: Str<'a>,
    #[serde(borrow)]
    answer: Str<'a>,
}

fn write_evidence(evidence: &[Evidence<'_>], out: &mut Sink<'_>) {
    for e in evidence {
        let _ = writeln!(
            out,
            "  {} ({}): {}",
            e.source.as_str().to_ascii_uppercase(),
            e.upstream,
            e.answer
        );
    }
}

fn availability(a: &AvailabilityAnswer<'_>, out: &mut Sink<'_>) {
    let _ = writeln!(out, "{}: {}: {}", a.domain, a.availability, a.reason);
    write_evidence(&a.evidence, out);
}

#[derive(Debug, Deserialize)]
struct BulkAnswer<'a> {
    #[serde(borrow)]
    results: Vec<BulkEntry<'a>>,
    meta: BulkMeta,
}

#[derive(Debug, Deserialize)]
struct BulkMeta {
    total: u64,
    checked: u64,
    counts: BulkCounts,
}

#[derive(Debug, Default, Deserialize)]
struct BulkCounts {
    #[serde(default)]
    available: u64,
    #[serde(default)]
    registered: u64,
    #[serde(default)]
    reserved: u64,
    #[serde(default)]
    unknown: u64,
}

#[derive(Debug, Deserialize)]
struct BulkEntry<'a> {
    #[serde(borrow)]
    input: Str<'a>,
    #[serde(borrow)]
    domain: Option<Str<'a>>,
    #[serde(borrow)]
    availability: Option<Str<'a>>,
    #[serde(borrow)]
    reason: Option<Str<'a>>,
    #[serde(borrow)]
    error: Option<Str<'a>>,
    #[serde(borrow)]
    detail: Option<Str<'a>>,
}

fn bulk_availability(a: &BulkAnswer<'_>, out: &mut Sink<'_>) {
    let c = &a.meta.counts;
    let _ = writeln!(
        out,
        "{} names, {} looked up: {} available, {} registered, {} reserved, {} unknown",
        a.meta.total, a.meta.checked, c.available, c.registered, c.reserved, c.unknown
    );
    for e in &a.results {
        match (&e.domain, &e.availability) {
            (Some(domain), Some(av)) => {
                out.push_str(domain.as_str());
                if e.input.as_str() != domain.as_str() {
                    let _ = write!(out, " (given as {})", e.input);
                }
                let _ = write!(out, ": {av}");
                if let Some(why) = &e.reason {
                    let _ = write!(out, " ({why})");
                }
            }
            _ => {
                let _ = write!(
                    out,
                    "{}: {}",
                    e.input,
                    e.error.as_ref().map_or("error", Str::as_str)
                );
                if let Some(d) = &e.detail {
                    let _ = write!(out, ": {d}");
                }
            }
        }
        out.push('\n');
    }
}

#[derive(Debug, Deserialize)]
struct TlsAnswer<'a> {
    #[serde(borrow)]
    domain: Str<'a>,
    port: u64,
    #[serde(borrow)]
    address: Str<'a>,
    #[serde(borrow)]
    protocol: Str<'a>,
    #[serde(borrow)]
    cipher_suite: Str<'a>,
    valid: bool,
    #[serde(borrow)]
    error: Option<Str<'a>>,
    #[serde(borrow)]
    error_detail: Option<Str<'a>>,
    #[serde(borrow)]
    certificate: Option<Certificate<'a>>,
    #[serde(default, borrow)]
    chain: Vec<Certificate<'a>>,
    #[serde(borrow)]
    learnt_at: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Certificate<'a> {
    #[serde(borrow)]
    subject: Str<'a>,
    #[serde(borrow)]
    issuer: Str<'a>,
    #[serde(default, borrow)]
    sans: Vec<Str<'a>>,
    #[serde(borrow)]
    not_before: Str<'a>,
    #[serde(borrow)]
    not_after: Str<'a>,
    days_to_expiry: i64,
}

fn tls(a: &TlsAnswer<'_>, out: &mut Sink<'_>) {
    let _ = write!(
        out,
        "{}:{} ({}): {}, {}",
        a.domain, a.port, a.address, a.protocol, a.cipher_suite
    );
    if let Some(at) = &a.learnt_at {
        let _ = write!(out, ", learnt {at}");
    }
    if a.valid {
        out.push_str("; the certificate is valid\n");
    } else {
        let _ = write!(
            out,
            "; the certificate is not valid: {}",
            a.error.as_ref().map_or("invalid", Str::as_str)
        );
        if let Some(d) = &a.error_detail {
            let _ = write!(out, " ({d})");
        }
        out.push('\n');
    }
    if let Some(c) = &a.certificate {
        let _ = writeln!(
            out,
            "Certificate: {}, issued by {}, for {}; valid {} to {} ({} days left)",
            c.subject,
            c.issuer,
            list(&c.sans),
            c.not_before.day(),
            c.not_after.day(),
            c.days_to_expiry
        );
    }
    let issuers: Vec<&str> = a.chain.iter().map(|c| c.subject.as_str()).collect();
    if !issuers.is_empty() {
        let _ = writeln!(out, "Chain: {}", issuers.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_in_their_currency() {
        let usd = Cash::of(None);
        assert_eq!(usd.amount(9.08).to_string(), "$9.08");
        assert_eq!(usd.amount(90.0).to_string(), "$90.00");
        assert_eq!(usd.amount(0.3).to_string(), "$0.30");
        assert_eq!(usd.amount(1234.5).to_string(), "$1234.50");
        assert_eq!(usd.maybe(None).to_string(), "n/a");
        let code = |c: &'static str| Currency {
            code: Str(c.into()),
            per_usd: 1.0,
            rate_date: Str("2026-04-13".into()),
        };
        let eur = code("EUR");
        assert_eq!(Cash::of(Some(&eur)).amount(8.45).to_string(), "EUR 8.45");
        let jpy = code("JPY");
        assert_eq!(Cash::of(Some(&jpy)).amount(1451.0).to_string(), "JPY 1451");
        // The sink writes what the Display writes.
        for cash in [usd, Cash::of(Some(&eur)), Cash::of(Some(&jpy))] {
            for v in [
                0.0,
                0.01,
                0.3,
                9.08,
                10.1,
                90.0,
                1234.5,
                1451.0,
                -2.5,
                42949672.94,
            ] {
                let mut buf = Vec::new();
                Sink::new(&mut buf, true).amount(&cash, v);
                assert_eq!(String::from_utf8(buf).unwrap(), cash.amount(v).to_string());
            }
        }
    }

    #[test]
    fn a_ranking_is_one_line_per_offer_with_its_terms() {
        let body = br#"{"results":{"com":{"cheapest_register":[
            {"rank":1,"registrar_name":"Porkbun","registrar_key":"porkbun","register_price":10.37,"renew_price":11.08,"total_cost_5_year":54.69,"promotion":true,"regular_register_price":12.98,"icann_fee":0.2,"icann_fee_included":true,"last_updated":"2025-03-22T00:00:00.000Z","stale":true},
            {"rank":2,"registrar_name":"Name.com","registrar_key":"namecom","register_price":11.0,"renew_price":12.0,"total_cost_5_year":59.0,"last_updated":"2026-08-16T00:00:00.000Z"}
        ],"registrar_count":17,"stale_count":4}},"meta":{"total_tlds":1,"tier":"pro","not_found":{"tlds":["nope"]}}}"#;
        let cx = Context {
            data_date: Some("2026-08-22"),
            at: None,
        };
        let text = success(Kind::Cheapest, body, cx).unwrap();
        assert_eq!(
            text,
            "Cheapest registrars by first-year price, prices in USD, data of 2026-08-22\n\
             .com: 17 registrars sell it (showing 2; 4 with stale prices)\n\
             1. porkbun  register $10.37  renew $11.08  5 years $54.69  (promotion: regular $12.98; ICANN fee $0.20 included; stale: price of 2025-03-22)\n\
             2. namecom (Name.com)  register $11.00  renew $12.00  5 years $59.00\n\
             Unknown TLDs: nope"
        );
        // Escaped strings are read too; what is not such an answer has no text.
        let escaped = br#"{"results":{},"meta":{"not_found":{"tlds":["a\"b"]}}}"#;
        let text = success(Kind::Cheapest, escaped, cx).unwrap();
        assert!(text.ends_with("Unknown TLDs: a\"b"), "{text}");
        assert_eq!(success(Kind::Cheapest, b"{\"x\":1}", cx), None);
        assert_eq!(success(Kind::Cheapest, b"{\"results\":", cx), None);
        let mut out = Vec::new();
        assert!(!write_success(Kind::Cheapest, b"[]", cx, &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn the_json_form_is_the_text_escaped_in_one_pass() {
        let body = br#"{"results":{"com":{"cheapest_register":[],"registrar_count":0}},"meta":{"not_found":{"tlds":["a\"b\\c\td\n\u0001\u00e9"]}}}"#;
        let cx = Context::default();
        let text = success(Kind::Cheapest, body, cx).unwrap();
        assert!(text.contains('\n') && !text.ends_with('\n'), "{text:?}");
        let mut out = b"\"".to_vec();
        assert!(write_success(Kind::Cheapest, body, cx, &mut out));
        out.push(b'"');
        let back: String = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, text);
        // A text's own trailing newline is kept by write_escaped.
        let mut out = b"\"".to_vec();
        write_escaped("a\"\n\n", &mut out);
        out.push(b'"');
        assert_eq!(serde_json::from_slice::<String>(&out).unwrap(), "a\"\n\n");
    }

    #[test]
    fn a_kept_text_is_its_answers_only() {
        let one = br#"{"results":{"com":{"cheapest_register":[{"rank":1,"registrar_name":"A","registrar_key":"a","register_price":1.0,"renew_price":2.0,"total_cost_5_year":9.0}],"registrar_count":1}},"meta":{}}"#;
        let two = br#"{"results":{"com":{"cheapest_register":[{"rank":1,"registrar_name":"A","registrar_key":"a","register_price":1.5,"renew_price":2.0,"total_cost_5_year":9.5}],"registrar_count":1}},"meta":{}}"#;
        let cx = Context {
            data_date: Some("2026-08-22"),
            at: None,
        };
        let at = Context {
            at: Some("2025-01-01"),
            ..cx
        };
        let kept = |body: &[u8], cx| {
            let mut out = Vec::new();
            assert!(write_success_kept(Kind::Cheapest, body, cx, &mut out));
            let mut fresh = Vec::new();
            assert!(write_success(Kind::Cheapest, body, cx, &mut fresh));
            assert_eq!(out, fresh);
            String::from_utf8(out).unwrap()
        };
        let first = kept(one, cx);
        assert_eq!(kept(one, cx), first, "the kept text");
        assert!(kept(two, cx).contains("$1.50"));
        assert!(kept(one, at).contains("as of 2025-01-01"));
        assert_eq!(kept(one, cx), first);
        // Another kind is never given this kind's text; nor is a body that is not one.
        let mut out = Vec::new();
        assert!(!write_success_kept(Kind::Overview, one, cx, &mut out));
        assert!(out.is_empty());
        let (n, bytes) = kept::held();
        assert!(n >= 1 && bytes <= kept::BUDGET, "{n} {bytes}");
    }

    #[test]
    fn a_prices_text_is_kept_whatever_its_elapsed_time() {
        let body = |elapsed: &str, price: &str| {
            format!(
                r#"{{"results":{{"com":{{"porkbun":{{"register_price":{price},"renew_price":11.08,"transfer_price":11.08}}}}}},"stats":{{"total_tlds":1,"time_elapsed":"{elapsed}","last_updated":"2026-08-22T00:00:00.000Z"}}}}"#
            )
        };
        let cx = Context {
            data_date: Some("2026-08-22"),
            at: None,
        };
        let text = |body: &str| {
            let mut out = Vec::new();
            assert!(write_success_kept(
                Kind::Prices,
                body.as_bytes(),
                cx,
                &mut out
            ));
            let mut fresh = Vec::new();
            assert!(write_success(Kind::Prices, body.as_bytes(), cx, &mut fresh));
            assert_eq!(out, fresh, "the kept text is the answer's own");
            String::from_utf8(out).unwrap()
        };
        let first = text(&body("0.04ms", "10.37"));
        assert!(first.contains("$10.37"), "{first}");
        let held = kept::held();
        assert_eq!(text(&body("123.45ms", "10.37")), first);
        assert_eq!(kept::held(), held, "the same text, kept once");
        assert!(text(&body("0.04ms", "10.38")).contains("$10.38"));
    }

    #[test]
    fn a_problem_is_its_code_and_detail() {
        let body = br#"{"type":"t","title":"T","status":404,"detail":"none of the TLDs asked for is known: x","code":"unknown_tld"}"#;
        assert_eq!(
            problem(body),
            "unknown_tld: none of the TLDs asked for is known: x"
        );
        assert_eq!(problem(b"nope"), "error: ");
        let mut out = b"\"".to_vec();
        assert!(write_problem(body, &mut out));
        out.push(b'"');
        assert_eq!(
            serde_json::from_slice::<String>(&out).unwrap(),
            problem(body)
        );
        assert!(!write_problem(b"nope", &mut Vec::new()));
    }
}
