//! The builder: a validated price source in, snapshot bytes out.
//!
//! Everything a request would otherwise compute is computed here, once:
//!
//! - per TLD, the offers sorted by `(register, renew, registrar key)`, renewal-only rows
//!   after them by `(renew, registrar key)`;
//! - the overview's aggregates (registrar count, averages, lowest renewal and lowest
//!   5-year cost with their registrars);
//! - the JSON of every cheapest entry (both shapes, with its rank), every price record
//!   and every registrar listing entry, laid out so that the `n` cheapest entries of a TLD
//!   are one contiguous slice;
//! - a hash table from TLD name to position, and a by-registrar index per TLD.
//!
//! The same source always gives the same bytes: nothing depends on hash-map order or the
//! clock, unless a build time is passed in [`BuildOptions::built_at_ms`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::json;
use crate::price::Fx;
use crate::snapshot::render;
use crate::snapshot::schema::{
    CatalogueEntry, Change, ExchangeRate, NONE, Offer, OfferTerms, Ranking, Registrar,
    RegistrarOffer, SnapshotData, Span, Tld, Version, five_year_order,
};
use crate::snapshot::{FORMAT_VERSION, HEADER_LEN, Header, Snapshot, name_hash};
use crate::source::{self, PriceRow, Source, SourceError};
use crate::time;

/// Options of a build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Recorded in the header as the build time. `None` keeps builds reproducible.
    pub built_at_ms: Option<i64>,
}

/// What a build produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildReport {
    /// TLDs in the snapshot.
    pub tlds: usize,
    /// Registrars in the snapshot.
    pub registrars: usize,
    /// (TLD, registrar) rows.
    pub offers: usize,
    /// Rows with a register price.
    pub sellers: usize,
    /// History changes.
    pub changes: usize,
    /// Size of the snapshot file.
    pub bytes: usize,
    /// Content hash, hex.
    pub hash_hex: String,
}

/// Why a build failed. No output file is written in any of these cases.
#[derive(Debug)]
pub enum BuildError {
    /// The price source was refused.
    Source(SourceError),
    /// Writing the output failed.
    Io {
        /// The output file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The data does not fit the format's 32-bit offsets.
    TooLarge(String),
    /// The archive could not be written (a bug).
    Archive(String),
    /// A freshly built snapshot failed its own verification (a bug).
    Verify(crate::snapshot::OpenError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Source(e) => write!(f, "{e}"),
            BuildError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BuildError::TooLarge(why) => write!(f, "too much data for one snapshot: {why}"),
            BuildError::Archive(why) => write!(f, "could not write the archive: {why}"),
            BuildError::Verify(e) => write!(f, "the built snapshot does not verify: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<SourceError> for BuildError {
    fn from(e: SourceError) -> Self {
        BuildError::Source(e)
    }
}

/// Reads the price source in `input`, builds, and publishes the snapshot at `output`
/// atomically ([`write_atomic`]).
pub fn build_dir(
    input: &Path,
    output: &Path,
    opts: &BuildOptions,
) -> Result<BuildReport, BuildError> {
    let source = source::read_dir(input)?;
    let (bytes, report) = build(&source, opts)?;
    write_atomic(output, &bytes).map_err(|e| BuildError::Io {
        path: output.to_path_buf(),
        source: e,
    })?;
    Ok(report)
}

/// Builds the snapshot of the real price data embedded in the binary (`snapshots/source/`
/// at compile time), in memory. This is what `tldsnap serve` answers from without flags.
pub fn default_snapshot() -> Result<Snapshot, BuildError> {
    let source = embedded_source()?;
    let (bytes, _) = build(&source, &BuildOptions::default())?;
    Snapshot::from_bytes(&bytes).map_err(BuildError::Verify)
}

/// The real price source embedded at compile time.
pub fn embedded_source() -> Result<Source, BuildError> {
    const REGISTRARS: &[u8] = include_bytes!("../snapshots/source/registrars.csv");
    const PRICES: &[u8] = include_bytes!("../snapshots/source/prices.csv");
    const HISTORY: &[u8] = include_bytes!("../snapshots/source/history.csv");
    const TLDS: &[u8] = include_bytes!("../snapshots/source/tlds.csv");
    const RATES: &[u8] = include_bytes!("../snapshots/source/rates.csv");
    let mut source = source::read_all(REGISTRARS, PRICES, Some(HISTORY), Some(TLDS))?;
    source.rates = source::read_rates(RATES)?;
    Ok(source)
}

pub use crate::files::write_atomic;

/// Text buffer with span bookkeeping.
struct Text(Vec<u8>);

impl Text {
    fn pos(&self) -> u32 {
        self.0.len() as u32
    }

    fn span(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> Span {
        let start = self.pos();
        f(&mut self.0);
        Span {
            start,
            end: self.pos(),
        }
    }

    fn str(&mut self, s: &str) -> Span {
        self.span(|o| o.extend_from_slice(s.as_bytes()))
    }
}

/// Builds snapshot bytes (header + archive) from a validated source, in four steps
/// that each can be tested alone: `sort` (the snapshot's orders), `aggregate` (the
/// numbers computed over the offers), [`render`] (the text, its pre-rendered JSON and
/// every array and index) and `archive` (the rkyv archive behind its header).
pub fn build(source: &Source, opts: &BuildOptions) -> Result<(Vec<u8>, BuildReport), BuildError> {
    let sorted = sort(source);
    let aggregates = aggregate(&sorted);
    let data = render(source, &sorted, &aggregates)?;
    archive(&data, opts)
}

/// The source in the snapshot's orders.
#[derive(Debug)]
struct Sorted<'a> {
    /// Registrars by key; an offer refers to one by its position here.
    registrars: Vec<&'a source::RegistrarRow>,
    /// Registrar key -> position in `registrars`.
    positions: BTreeMap<&'a str, u32>,
    /// One group per TLD with prices or history, by name.
    groups: Vec<Group<'a>>,
}

/// The rows of one TLD, in the snapshot's order.
#[derive(Debug)]
struct Group<'a> {
    /// The canonical name.
    name: &'a str,
    /// Sellers by (register, renew, registrar key), then renewal-only rows by (renew,
    /// registrar key).
    rows: Vec<&'a PriceRow>,
    /// How many of `rows` are sellers (they come first).
    sellers: usize,
    /// Its price history by (registrar key, date).
    history: Vec<&'a source::HistoryRow>,
}

/// Step 1: registrars by key, rows grouped by TLD name and ordered within the group.
fn sort(source: &Source) -> Sorted<'_> {
    let mut registrars: Vec<&source::RegistrarRow> = source.registrars.iter().collect();
    registrars.sort_by(|a, b| a.key.cmp(&b.key));
    let positions: BTreeMap<&str, u32> = registrars
        .iter()
        .enumerate()
        .map(|(i, r)| (r.key.as_str(), i as u32))
        .collect();
    // BTreeMap: sorted by name, deterministic.
    let mut by_tld: BTreeMap<&str, (Vec<&PriceRow>, Vec<&source::HistoryRow>)> = BTreeMap::new();
    for p in &source.prices {
        by_tld.entry(p.tld.as_str()).or_default().0.push(p);
    }
    for h in &source.history {
        by_tld.entry(h.tld.as_str()).or_default().1.push(h);
    }
    let groups = by_tld
        .into_iter()
        .map(|(name, (mut rows, mut history))| {
            let pos = |key: &str| positions[key];
            // Sellers first by (register, renew, key); then renewal-only by (renew, key).
            // Registrar position order is key order, so comparing positions compares keys.
            rows.sort_by_key(|r| (r.register.is_none(), r.register, r.renew, pos(&r.registrar)));
            history.sort_by_key(|h| (pos(&h.registrar), h.date));
            let sellers = rows.iter().take_while(|r| r.register.is_some()).count();
            Group {
                name,
                rows,
                sellers,
                history,
            }
        })
        .collect();
    Sorted {
        registrars,
        positions,
        groups,
    }
}

/// What is computed over the offers: per TLD and per registrar.
#[derive(Debug, Default)]
struct Aggregates {
    /// Per group of [`Sorted::groups`].
    tlds: Vec<TldAggregates>,
    /// Per registrar of [`Sorted::registrars`].
    registrars: Vec<Coverage>,
    /// The newest price of all, milliseconds.
    data_updated_ms: i64,
}

/// The overview's aggregates for one TLD, over its sellers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct TldAggregates {
    /// Average register, renew and transfer price, cents rounded half up ([`NONE`]
    /// when no seller has one).
    avg: (u32, u32, u32),
    /// The seller with the lowest renewal (ties: registrar key), by row of the group.
    lowest_renew: Option<usize>,
    /// The seller with the lowest 5-year cost (ties: registrar key), by row.
    lowest_5y: Option<usize>,
}

/// One registrar's share of the offers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Coverage {
    /// TLDs it sells.
    sells: u32,
    /// TLDs it has only a renewal price for.
    renewal_only: u32,
    /// Its newest price, milliseconds (0 when it has none).
    updated_ms: i64,
    /// TLDs where it ranks first for registration.
    cheapest_in: u32,
}

fn cents(c: Option<u32>) -> u32 {
    c.unwrap_or(NONE)
}

/// Step 2: per TLD its averages and lowest offers; per registrar its coverage; the data
/// date.
fn aggregate(sorted: &Sorted<'_>) -> Aggregates {
    let mut out = Aggregates {
        registrars: vec![Coverage::default(); sorted.registrars.len()],
        ..Aggregates::default()
    };
    for g in &sorted.groups {
        let pos = |r: &PriceRow| sorted.positions[r.registrar.as_str()];
        let sold = &g.rows[..g.sellers];
        let five_year = |r: &PriceRow| five_year_order(cents(r.register), cents(r.renew));
        out.tlds.push(TldAggregates {
            avg: (
                render::avg(sold.iter().map(|r| cents(r.register))),
                render::avg(sold.iter().map(|r| cents(r.renew))),
                render::avg(sold.iter().map(|r| cents(r.transfer))),
            ),
            lowest_renew: (0..sold.len()).min_by_key(|&i| (sold[i].renew, pos(sold[i]))),
            lowest_5y: (0..sold.len()).min_by_key(|&i| (five_year(sold[i]), pos(sold[i]))),
        });
        for (i, r) in g.rows.iter().enumerate() {
            let c = &mut out.registrars[pos(r) as usize];
            if i < g.sellers {
                c.sells += 1;
            } else {
                c.renewal_only += 1;
            }
            c.updated_ms = c.updated_ms.max(r.updated_ms);
            out.data_updated_ms = out.data_updated_ms.max(r.updated_ms);
        }
        if let Some(first) = sold.first() {
            out.registrars[pos(first) as usize].cheapest_in += 1;
        }
    }
    out
}

/// Step 3: the snapshot's data. The text is laid out as the layout checks expect at
/// open: each registrar's pieces, then per TLD its name, quoted name, quoted
/// currencies, client cheapest entries, tails, price records and listing prices, then
/// the catalogue's names and words; the arrays and indexes refer into it.
fn render(
    source: &Source,
    sorted: &Sorted<'_>,
    aggregates: &Aggregates,
) -> Result<SnapshotData, BuildError> {
    let mut data = SnapshotData::default();
    let mut text = Text(Vec::new());
    for (r, coverage) in sorted.registrars.iter().zip(&aggregates.registrars) {
        let name_json = text.span(|o| json::write_str(&r.name, o));
        let key = text.str(&r.key);
        let name = text.str(&r.name);
        let homepage = text.str(&r.homepage);
        let name_bytes = text.0[name_json.start as usize..name_json.end as usize].to_vec();
        data.registrars.push(Registrar {
            key,
            name,
            name_json,
            homepage,
            listing_head: text.span(|out| render::listing_head(&name_bytes, &r.key, out)),
            listing_path: text.span(|out| render::listing_path(&r.key, out)),
            sells: coverage.sells,
            renewal_only: coverage.renewal_only,
            updated_ms: coverage.updated_ms,
            cheapest_in: coverage.cheapest_in,
            ..Registrar::default()
        });
    }
    for (g, agg) in sorted.groups.iter().zip(&aggregates.tlds) {
        render_group(&mut data, &mut text, sorted, g, agg);
        if text.0.len() > u32::MAX as usize {
            return Err(BuildError::TooLarge(format!(
                "text passed 4 GiB at TLD {}",
                g.name
            )));
        }
    }
    data.data_updated_ms = aggregates.data_updated_ms;
    add_registrar_lists(&mut data);
    add_versions(&mut data, source, &sorted.positions);
    add_catalogue(&mut data, &mut text, source);
    add_rates(&mut data, &mut text, source);
    if text.0.len() > u32::MAX as usize {
        return Err(BuildError::TooLarge(
            "text passed 4 GiB in the catalogue".into(),
        ));
    }
    data.tld_table = tld_table(&data, &text.0);
    data.text = text.0;
    Ok(data)
}

/// One TLD: its offers and their pre-rendered JSON, its by-registrar index and history.
fn render_group(
    data: &mut SnapshotData,
    text: &mut Text,
    sorted: &Sorted<'_>,
    g: &Group<'_>,
    agg: &TldAggregates,
) {
    let pos = |r: &PriceRow| sorted.positions[r.registrar.as_str()];
    let first = data.offers.len() as u32;
    let at = |i: Option<usize>| i.map_or(NONE, |i| first + i as u32);
    let mut tld = Tld {
        name: text.str(g.name),
        first_offer: first,
        sellers: g.sellers as u32,
        rows: g.rows.len() as u32,
        first_change: data.history.len() as u32,
        changes: g.history.len() as u32,
        key_json: text.span(|o| json::write_str(g.name, o)),
        avg_register: agg.avg.0,
        avg_renew: agg.avg.1,
        avg_transfer: agg.avg.2,
        lowest_renew_offer: at(agg.lowest_renew),
        lowest_5y_offer: at(agg.lowest_5y),
        oldest_ms: g.rows[..g.sellers]
            .iter()
            .map(|r| r.updated_ms)
            .min()
            .unwrap_or(i64::MAX),
        ..Tld::default()
    };
    let mut offers: Vec<Offer> = g
        .rows
        .iter()
        .map(|r| Offer {
            registrar: pos(r),
            register: cents(r.register),
            renew: cents(r.renew),
            transfer: cents(r.transfer),
            updated_ms: r.updated_ms,
            original_register: r.original.as_ref().map_or(NONE, |o| cents(o.register)),
            original_renew: r.original.as_ref().map_or(NONE, |o| cents(o.renew)),
            original_transfer: r.original.as_ref().map_or(NONE, |o| cents(o.transfer)),
            rate_date: r.original.as_ref().map_or(0, |o| o.rate_date),
            regular_register: cents(r.terms.regular_register),
            icann_fee: cents(r.terms.icann_fee),
            icann_fee_included: r.terms.icann_fee.is_some() && r.terms.icann_fee_included,
            promotion: r.register.is_some()
                && (r.terms.promotion || r.terms.regular_register.is_some()),
            coupon_register: r.terms.coupon.as_ref().map_or(NONE, |c| c.register),
            member_register: cents(r.terms.member[0]),
            member_renew: cents(r.terms.member[1]),
            member_transfer: cents(r.terms.member[2]),
            years: if r.terms.register_years.iter().any(Option::is_some) {
                let at = data.register_years.len() as u32;
                data.register_years
                    .extend(r.terms.register_years.iter().map(|y| cents(*y)));
                at
            } else {
                NONE
            },
            ..Offer::default()
        })
        .collect();
    for (o, r) in offers.iter_mut().zip(&g.rows) {
        if let Some(orig) = &r.original {
            o.original_currency = text.str(&orig.currency);
        }
    }
    for (o, r) in offers.iter_mut().zip(&g.rows) {
        if let Some(c) = &r.terms.coupon {
            o.coupon_code = text.str(&c.code);
        }
    }

    // Client-shape cheapest entries, contiguous, comma separated.
    tld.client_start = text.pos();
    for (i, (o, r)) in offers.iter_mut().zip(&g.rows).enumerate().take(g.sellers) {
        let name_json = data.registrars[o.registrar as usize].name_json;
        let name_bytes = text.0[name_json.start as usize..name_json.end as usize].to_vec();
        let key = sorted.registrars[o.registrar as usize].key.as_str();
        text.span(|out| {
            if i > 0 {
                out.push(b',');
            }
            render::client_entry(
                i + 1,
                &name_bytes,
                key,
                (o.register, o.renew),
                offer_terms(o, r),
                o.updated_ms,
                false,
                Fx::USD,
                out,
            );
        });
        o.client_end = text.pos();
    }
    tld.client_tail = text.span(|out| render::client_tail(g.sellers, out));
    tld.public_tail = text.span(|out| render::public_tail(g.sellers, agg.avg, Fx::USD, out));

    // Price records, every row, group order, comma separated.
    tld.records_start = text.pos();
    for (i, (o, r)) in offers.iter_mut().zip(&g.rows).enumerate() {
        if i > 0 {
            text.0.push(b',');
        }
        let key = sorted.registrars[o.registrar as usize].key.as_str();
        let prices = (o.register, o.renew, o.transfer);
        let (terms, ms) = (offer_terms(o, r), o.updated_ms);
        o.record = text.span(|out| render::record(key, prices, terms, ms, Fx::USD, out));
    }

    // Registrar listing prices (sellers only).
    for (o, r) in offers.iter_mut().zip(&g.rows).take(g.sellers) {
        let original = r.original.as_ref().map(|orig| {
            (
                orig.currency.as_str(),
                (o.original_register, o.original_renew, o.original_transfer),
                orig.rate_date as i64,
            )
        });
        let (prices, terms) = ((o.register, o.renew, o.transfer), offer_terms(o, r));
        o.listing_prices =
            text.span(|out| render::listing_prices(prices, original, terms, Fx::USD, out));
    }

    // The other rankings of the sellers: positions, ordered by the ranking's key, then
    // the first-year price, then the registrar key (positions order keys).
    for (slot, ranking) in Ranking::ALL[1..].iter().enumerate() {
        let mut order: Vec<u32> = (0..offers.len() as u32).collect();
        order[..g.sellers].sort_by_key(|&i| {
            let o = &offers[i as usize];
            (ranking.key(o.register, o.renew), o.register, o.registrar)
        });
        data.rankings[slot].extend(order.into_iter().map(|i| first + i));
    }

    // By-registrar index of the group.
    let mut by_reg: Vec<u32> = (0..offers.len() as u32).collect();
    by_reg.sort_by_key(|&i| offers[i as usize].registrar);
    data.by_registrar
        .extend(by_reg.into_iter().map(|i| RegistrarOffer {
            registrar: offers[i as usize].registrar,
            offer: first + i,
        }));
    data.offers.extend(offers);
    data.history.extend(g.history.iter().map(|h| Change {
        registrar: sorted.positions[h.registrar.as_str()],
        date: h.date,
        register: cents(h.register),
        renew: cents(h.renew),
        transfer: cents(h.transfer),
    }));
    data.tlds.push(tld);
}

/// An offer's terms, as the writers take them (`r`: its row, which holds the coupon
/// code).
fn offer_terms<'a>(o: &Offer, r: &'a source::PriceRow) -> OfferTerms<'a> {
    OfferTerms {
        promotion: o.promotion,
        regular_register: o.regular_register,
        icann_fee: o.icann_fee,
        icann_fee_included: o.icann_fee_included,
        coupon_code: r.terms.coupon.as_ref().map_or("", |c| c.code.as_str()),
        coupon_register: o.coupon_register,
        member: (o.member_register, o.member_renew, o.member_transfer),
    }
}

/// The reference rates, by code, with each currency's minor unit.
fn add_rates(data: &mut SnapshotData, text: &mut Text, source: &Source) {
    let mut rates: Vec<&source::RateRow> = source.rates.iter().collect();
    rates.sort_by(|a, b| a.currency.cmp(&b.currency));
    for r in rates {
        data.rates.push(ExchangeRate {
            code: text.str(&r.currency),
            mantissa: r.mantissa,
            scale: r.scale,
            minor_unit: crate::price::minor_unit(&r.currency),
            date: r.date,
        });
    }
}

/// The TLD hash table: at most half full, so probes stay short and a miss ends quickly.
fn tld_table(data: &SnapshotData, text: &[u8]) -> Vec<u32> {
    let size = (data.tlds.len() * 2).next_power_of_two().max(8);
    let mut table = vec![0u32; size];
    for (i, t) in data.tlds.iter().enumerate() {
        let name = &text[t.name.start as usize..t.name.end as usize];
        let mut slot = name_hash(name) as usize & (size - 1);
        while table[slot] != 0 {
            slot = (slot + 1) & (size - 1);
        }
        table[slot] = i as u32 + 1;
    }
    table
}

/// Step 4: the rkyv archive of `data` behind its header, and the report of the build.
fn archive(data: &SnapshotData, opts: &BuildOptions) -> Result<(Vec<u8>, BuildReport), BuildError> {
    let payload = rkyv::to_bytes::<rkyv::rancor::Error>(data)
        .map_err(|e| BuildError::Archive(e.to_string()))?;
    let header = Header {
        version: FORMAT_VERSION,
        payload_len: payload.len() as u64,
        content_hash: crate::snapshot::content_hash(&payload),
        data_updated_ms: data.data_updated_ms,
        built_at_ms: opts.built_at_ms,
    };
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(&header.to_bytes());
    bytes.extend_from_slice(&payload);
    let report = BuildReport {
        tlds: data.tlds.len(),
        registrars: data.registrars.len(),
        offers: data.offers.len(),
        sellers: data.offers.iter().filter(|o| o.register != NONE).count(),
        changes: data.history.len(),
        bytes: bytes.len(),
        hash_hex: header.hash_hex(),
    };
    Ok((bytes, report))
}

/// Each registrar's price list: its offers in TLD name order.
fn add_registrar_lists(data: &mut SnapshotData) {
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); data.registrars.len()];
    // Offers are grouped by TLD in name order, so each list comes out in name order.
    for (i, o) in data.offers.iter().enumerate() {
        lists[o.registrar as usize].push(i as u32);
    }
    for (r, list) in data.registrars.iter_mut().zip(lists) {
        r.first_listed = data.registrar_offers.len() as u32;
        data.registrar_offers.extend(list);
    }
}

/// Each registrar's dated feed versions: the days its history shows a change, plus the
/// day of its current prices, each with the number of TLDs it offered afterwards.
fn add_versions(data: &mut SnapshotData, source: &Source, reg_pos: &BTreeMap<&str, u32>) {
    let mut per_reg: Vec<Vec<&source::HistoryRow>> = vec![Vec::new(); data.registrars.len()];
    for h in &source.history {
        per_reg[reg_pos[h.registrar.as_str()] as usize].push(h);
    }
    for (r, mut rows) in per_reg.into_iter().enumerate() {
        rows.sort_by(|a, b| (a.date, &a.tld).cmp(&(b.date, &b.tld)));
        let first = data.versions.len();
        let mut live: BTreeMap<&str, bool> = BTreeMap::new();
        let mut count = 0u32;
        for (i, h) in rows.iter().enumerate() {
            // An offer is a register or a renew price (what prices.csv takes); a row
            // with neither records that the feed stopped listing the name.
            let offered = h.register.is_some() || h.renew.is_some();
            let was = live.insert(h.tld.as_str(), offered).unwrap_or(false);
            match (was, offered) {
                (false, true) => count += 1,
                (true, false) => count -= 1,
                _ => {}
            }
            if rows.get(i + 1).is_none_or(|n| n.date != h.date) {
                data.versions.push(Version {
                    date: h.date,
                    ms: h.date as i64 * time::MS_PER_DAY,
                    live: count,
                });
            }
        }
        let reg = &mut data.registrars[r];
        if reg.sells + reg.renewal_only > 0 {
            let day = reg.updated_ms.div_euclid(time::MS_PER_DAY) as i32;
            match data.versions[first..].last_mut() {
                Some(v) if v.date == day => v.ms = reg.updated_ms,
                Some(v) if v.date > day => {}
                last => {
                    let live = last.map_or(0, |v| v.live);
                    data.versions.push(Version {
                        date: day,
                        ms: reg.updated_ms,
                        live,
                    });
                }
            }
        }
        reg.first_version = first as u32;
        reg.versions = (data.versions.len() - first) as u32;
    }
}

/// The catalogue: every TLD of the IANA list (`tlds.csv`) and every TLD with prices or
/// history, by name, with its type and manager, and its two other sort orders.
fn add_catalogue(data: &mut SnapshotData, text: &mut Text, source: &Source) {
    let info: BTreeMap<&str, &source::TldInfoRow> =
        source.tlds.iter().map(|t| (t.tld.as_str(), t)).collect();
    // name -> position in `tlds` (NONE when unpriced)
    let mut names: BTreeMap<String, u32> =
        source.tlds.iter().map(|t| (t.tld.clone(), NONE)).collect();
    for (i, t) in data.tlds.iter().enumerate() {
        let name = String::from_utf8_lossy(&text.0[t.name.start as usize..t.name.end as usize]);
        names.insert(name.into_owned(), i as u32);
    }
    for (name, tld) in names {
        let top = crate::tld::last_label(&name);
        let kind = info.get(top).map_or("", |i| i.kind.as_str());
        // Only a top-level name has the root zone's manager; a second level such as
        // `us.com` is often run by someone else.
        let manager = match info.get(name.as_str()) {
            Some(i) if top == name => i.manager.as_str(),
            _ => "",
        };
        let name_span = match tld {
            NONE => text.str(&name),
            i => data.tlds[i as usize].name,
        };
        let unicode = if name.split('.').any(|l| l.starts_with("xn--")) {
            let (u, result) = idna::domain_to_unicode(&name);
            if result.is_ok() {
                text.str(&u)
            } else {
                name_span
            }
        } else {
            name_span
        };
        data.catalogue.push(CatalogueEntry {
            name: name_span,
            unicode,
            kind: text.str(kind),
            manager: text.str(manager),
            tld,
        });
    }
    let n = data.catalogue.len() as u32;
    let cheapest = |e: &CatalogueEntry| match e.tld {
        NONE => NONE,
        t => {
            let t = &data.tlds[t as usize];
            if t.sellers == 0 {
                NONE
            } else {
                data.offers[t.first_offer as usize].register
            }
        }
    };
    let sellers = |e: &CatalogueEntry| match e.tld {
        NONE => 0,
        t => data.tlds[t as usize].sellers,
    };
    // Position order is name order, so the position breaks ties by name.
    let mut by_cheapest: Vec<u32> = (0..n).collect();
    by_cheapest.sort_by_key(|&i| (cheapest(&data.catalogue[i as usize]), i));
    let mut by_registrars: Vec<u32> = (0..n).collect();
    by_registrars.sort_by_key(|&i| (std::cmp::Reverse(sellers(&data.catalogue[i as usize])), i));
    data.catalogue_by_cheapest = by_cheapest;
    data.catalogue_by_registrars = by_registrars;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three registrars given out of key order; `com` with sellers in no order, a tie
    /// on (register, renew) and a renewal-only row; `net` with one seller and no
    /// transfer; `org` with history only.
    fn source() -> Source {
        let registrars = "key,name,homepage\n\
            zulu,Zulu,https://z.example\n\
            alpha,Alpha \"A\",https://a.example\n\
            mike,Mike,\n";
        let prices = "tld,registrar,register,renew,transfer,currency,updated_at\n\
            com,zulu,9.00,12.00,9.00,USD,2026-01-02T00:00:00Z\n\
            net,mike,,15.00,,USD,2026-01-03T00:00:00Z\n\
            com,alpha,9.00,12.00,8.00,USD,2026-01-01T00:00:00Z\n\
            com,mike,10.00,10.00,10.01,USD,2026-01-03T00:00:00Z\n\
            net,alpha,4.99,5.01,,USD,2026-01-04T00:00:00Z\n";
        let history = "date,tld,registrar,register,renew,transfer\n\
            2025-06-01,org,zulu,1.00,1.00,1.00\n\
            2025-05-01,com,zulu,8.00,11.00,8.00\n\
            2025-04-01,com,alpha,8.50,11.50,8.50\n\
            2025-03-01,com,zulu,7.00,10.00,7.00\n";
        source::read_all(
            registrars.as_bytes(),
            prices.as_bytes(),
            Some(history.as_bytes()),
            None,
        )
        .expect("the test source reads")
    }

    #[test]
    fn sort_orders_registrars_groups_offers_and_history() {
        let source = source();
        let sorted = sort(&source);
        let keys: Vec<&str> = sorted.registrars.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["alpha", "mike", "zulu"]);
        let names: Vec<&str> = sorted.groups.iter().map(|g| g.name).collect();
        assert_eq!(names, ["com", "net", "org"]);
        let com = &sorted.groups[0];
        // (9.00, 12.00) twice: the key breaks the tie; then 10.00.
        let rows: Vec<&str> = com.rows.iter().map(|r| r.registrar.as_str()).collect();
        assert_eq!(rows, ["alpha", "zulu", "mike"]);
        assert_eq!(com.sellers, 3);
        let history: Vec<(&str, i32)> = com
            .history
            .iter()
            .map(|h| (h.registrar.as_str(), h.date))
            .collect();
        let day = |s: &str| crate::time::parse_date(s).unwrap() as i32;
        assert_eq!(
            history,
            [
                ("alpha", day("2025-04-01")),
                ("zulu", day("2025-03-01")),
                ("zulu", day("2025-05-01"))
            ]
        );
        // Sellers before the renewal-only row.
        let net = &sorted.groups[1];
        let rows: Vec<(&str, bool)> = net
            .rows
            .iter()
            .map(|r| (r.registrar.as_str(), r.register.is_some()))
            .collect();
        assert_eq!(rows, [("alpha", true), ("mike", false)]);
        assert_eq!(net.sellers, 1);
        let org = &sorted.groups[2];
        assert!(org.rows.is_empty() && org.history.len() == 1);
    }

    #[test]
    fn aggregate_computes_averages_lowest_offers_and_coverage() {
        let source = source();
        let sorted = sort(&source);
        let a = aggregate(&sorted);
        let com = a.tlds[0];
        // Register (900 + 900 + 1000) / 3 = 933.3; transfer (800 + 900 + 1001) / 3 = 900.3.
        assert_eq!(com.avg, (933, 1133, 900));
        // Lowest renewal: mike's 10.00 (row 2); lowest 5 years: alpha, zulu 57.00 and
        // mike 50.00, so mike.
        assert_eq!(com.lowest_renew, Some(2));
        assert_eq!(com.lowest_5y, Some(2));
        // `net`: one seller without a transfer price.
        assert_eq!(a.tlds[1].avg, (499, 501, NONE));
        assert_eq!(a.tlds[2], TldAggregates::default_none());
        let [alpha, mike, zulu] = [a.registrars[0], a.registrars[1], a.registrars[2]];
        assert_eq!(
            (alpha.sells, alpha.renewal_only, alpha.cheapest_in),
            (2, 0, 2)
        );
        assert_eq!((mike.sells, mike.renewal_only, mike.cheapest_in), (1, 1, 0));
        assert_eq!((zulu.sells, zulu.renewal_only, zulu.cheapest_in), (1, 0, 0));
        let ms = |s: &str| crate::time::parse_rfc3339(s).unwrap();
        assert_eq!(alpha.updated_ms, ms("2026-01-04T00:00:00Z"));
        assert_eq!(a.data_updated_ms, ms("2026-01-04T00:00:00Z"));
    }

    impl TldAggregates {
        /// A TLD without sellers.
        fn default_none() -> TldAggregates {
            TldAggregates {
                avg: (NONE, NONE, NONE),
                lowest_renew: None,
                lowest_5y: None,
            }
        }
    }

    #[test]
    fn render_lays_out_the_pre_rendered_json_the_queries_copy() {
        let source = source();
        let sorted = sort(&source);
        let data = render(&source, &sorted, &aggregate(&sorted)).unwrap();
        let text = |s: Span| std::str::from_utf8(&data.text[s.start as usize..s.end as usize]);
        let com = &data.tlds[0];
        let last = &data.offers[(com.first_offer + com.sellers - 1) as usize];
        // The three cheapest entries are one slice, ranked, escaped.
        let entries =
            std::str::from_utf8(&data.text[com.client_start as usize..last.client_end as usize])
                .unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&format!("[{entries}]")).unwrap();
        assert_eq!(parsed[0]["rank"], 1);
        assert_eq!(parsed[0]["registrar_name"], "Alpha \"A\"");
        assert_eq!(parsed[2]["registrar_key"], "mike");
        assert_eq!(parsed[2]["total_cost_5_year"], 50.0);
        assert_eq!(text(com.client_tail).unwrap(), "],\"registrar_count\":3}");
        let records = format!(
            "{{{}}}",
            std::str::from_utf8(&data.text[com.records_start as usize..last.record.end as usize])
                .unwrap()
        );
        let records: serde_json::Value = serde_json::from_str(&records).unwrap();
        assert_eq!(records["alpha"]["transfer_price"], 8.0);
        assert_eq!(records["mike"]["last_updated"], "2026-01-03T00:00:00.000Z");
        // Indexes: the by-registrar run of `com` is in registrar order; the TLD table
        // finds every TLD.
        let run: Vec<u32> = data.by_registrar[..3].iter().map(|e| e.registrar).collect();
        assert_eq!(run, [0, 1, 2]);
        assert_eq!(data.tld_table.iter().filter(|&&v| v != 0).count(), 3);
        assert_eq!(data.registrars[0].cheapest_in, 2);
    }

    #[test]
    fn archive_puts_the_hash_of_the_payload_in_the_header_and_opens() {
        let source = source();
        let sorted = sort(&source);
        let data = render(&source, &sorted, &aggregate(&sorted)).unwrap();
        let opts = BuildOptions {
            built_at_ms: Some(1_700_000_000_000),
        };
        let (bytes, report) = archive(&data, &opts).unwrap();
        let header = Header::parse(&bytes).unwrap();
        assert_eq!(header.payload_len as usize, bytes.len() - HEADER_LEN);
        assert_eq!(
            header.content_hash,
            crate::snapshot::content_hash(&bytes[HEADER_LEN..])
        );
        assert_eq!(header.built_at_ms, Some(1_700_000_000_000));
        assert_eq!(header.data_updated_ms, data.data_updated_ms);
        assert_eq!(
            (
                report.tlds,
                report.registrars,
                report.offers,
                report.sellers,
                report.changes
            ),
            (3, 3, 5, 4, 4)
        );
        assert_eq!(report.bytes, bytes.len());
        let snapshot = Snapshot::from_bytes(&bytes).expect("the archive opens");
        assert_eq!(snapshot.data().offers.len(), 5);
        // The four steps are the build.
        assert_eq!(build(&source, &opts).unwrap().0, bytes);
    }
}
