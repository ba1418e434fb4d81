//! The builder: a validated price source in, snapshot bytes out.
//!
//! Everything a request would otherwise compute is computed here, once:
//!
//! - per TLD, the offers sorted by `(register, renew, registrar key)`, renewal-only rows
//!   after them by `(renew, registrar key)`;
//! - the aggregates of seed 1.7 (registrar count, averages, lowest renewal and lowest
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
use crate::query::render;
use crate::snapshot::schema::{
    CatalogueEntry, Change, NONE, Offer, Registrar, RegistrarOffer, SnapshotData, Span, Tld,
    Version,
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
    Ok(source::read_all(
        REGISTRARS,
        PRICES,
        Some(HISTORY),
        Some(TLDS),
    )?)
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

/// Builds snapshot bytes (header + archive) from a validated source.
pub fn build(source: &Source, opts: &BuildOptions) -> Result<(Vec<u8>, BuildReport), BuildError> {
    let mut data = SnapshotData::default();
    let mut text = Text(Vec::new());

    // Registrars, sorted by key; `reg_pos` maps a key to its position.
    let mut regs: Vec<&source::RegistrarRow> = source.registrars.iter().collect();
    regs.sort_by(|a, b| a.key.cmp(&b.key));
    let reg_pos: BTreeMap<&str, u32> = regs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.key.as_str(), i as u32))
        .collect();
    for r in &regs {
        let name_json = text.span(|o| json::write_str(&r.name, o));
        data.registrars.push(Registrar {
            key: text.str(&r.key),
            name: text.str(&r.name),
            name_json,
            homepage: text.str(&r.homepage),
            ..Registrar::default()
        });
        let name_bytes = text.0[name_json.start as usize..name_json.end as usize].to_vec();
        let listing_head = text.span(|out| render::listing_head(&name_bytes, &r.key, out));
        let listing_path = text.span(|out| render::listing_path(&r.key, out));
        let reg = data.registrars.last_mut().expect("just pushed");
        (reg.listing_head, reg.listing_path) = (listing_head, listing_path);
    }

    // Rows grouped by TLD (BTreeMap: sorted by name, deterministic).
    let mut groups: BTreeMap<&str, (Vec<&PriceRow>, Vec<&source::HistoryRow>)> = BTreeMap::new();
    for p in &source.prices {
        groups.entry(p.tld.as_str()).or_default().0.push(p);
    }
    for h in &source.history {
        groups.entry(h.tld.as_str()).or_default().1.push(h);
    }

    let cents = |c: Option<u32>| c.unwrap_or(NONE);
    for (name, (mut rows, mut hist)) in groups {
        let pos = |r: &PriceRow| reg_pos[r.registrar.as_str()];
        // Sellers first by (register, renew, key); then renewal-only by (renew, key). Registrar
        // position order is key order, so comparing positions compares keys.
        rows.sort_by_key(|r| (r.register.is_none(), r.register, r.renew, pos(r)));
        let sellers = rows.iter().take_while(|r| r.register.is_some()).count();
        let first = data.offers.len() as u32;
        let mut tld = Tld {
            name: text.str(name),
            first_offer: first,
            sellers: sellers as u32,
            rows: rows.len() as u32,
            first_change: data.history.len() as u32,
            changes: hist.len() as u32,
            key_json: text.span(|o| json::write_str(name, o)),
            ..Tld::default()
        };
        let sold = &rows[..sellers];
        tld.avg_register = render::avg(sold.iter().map(|r| cents(r.register)));
        tld.avg_renew = render::avg(sold.iter().map(|r| cents(r.renew)));
        tld.avg_transfer = render::avg(sold.iter().map(|r| cents(r.transfer)));
        let five_year = |r: &PriceRow| five_year_order(cents(r.register), cents(r.renew));
        tld.lowest_renew_offer = (0..sellers)
            .min_by_key(|&i| (sold[i].renew, pos(sold[i])))
            .map_or(NONE, |i| first + i as u32);
        tld.lowest_5y_offer = (0..sellers)
            .min_by_key(|&i| (five_year(sold[i]), pos(sold[i])))
            .map_or(NONE, |i| first + i as u32);

        let mut offers: Vec<Offer> = rows
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
                ..Offer::default()
            })
            .collect();
        for (o, r) in offers.iter_mut().zip(&rows) {
            if let Some(orig) = &r.original {
                o.original_currency = text.str(&orig.currency);
            }
        }

        // Client-shape cheapest entries, contiguous, comma separated.
        tld.client_start = text.pos();
        for (i, o) in offers.iter_mut().enumerate().take(sellers) {
            let reg = &data.registrars[o.registrar as usize];
            let name_json = reg.name_json;
            let name_bytes = text.0[name_json.start as usize..name_json.end as usize].to_vec();
            let key = regs[o.registrar as usize].key.as_str();
            text.span(|out| {
                if i > 0 {
                    out.push(b',');
                }
                render::client_entry(i + 1, &name_bytes, key, o.register, o.renew, out);
            });
            o.client_end = text.pos();
        }
        tld.client_tail = text.span(|out| render::client_tail(sellers, out));
        let averages = (tld.avg_register, tld.avg_renew, tld.avg_transfer);
        tld.public_tail = text.span(|out| render::public_tail(sellers, averages, out));

        // Price records, every row, group order, comma separated.
        tld.records_start = text.pos();
        for (i, o) in offers.iter_mut().enumerate() {
            if i > 0 {
                text.0.push(b',');
            }
            let key = regs[o.registrar as usize].key.as_str();
            o.record = text.span(|out| {
                render::record(key, o.register, o.renew, o.transfer, o.updated_ms, out)
            });
        }

        // Registrar listing prices (sellers only).
        for (o, r) in offers.iter_mut().zip(&rows).take(sellers) {
            let original = r.original.as_ref().map(|orig| {
                (
                    orig.currency.as_str(),
                    (o.original_register, o.original_renew, o.original_transfer),
                    orig.rate_date as i64,
                )
            });
            o.listing_prices = text.span(|out| {
                render::listing_prices((o.register, o.renew, o.transfer), original, out)
            });
        }

        // Per-registrar coverage.
        for (i, o) in offers.iter().enumerate() {
            let reg = &mut data.registrars[o.registrar as usize];
            if i < sellers {
                reg.sells += 1;
            } else {
                reg.renewal_only += 1;
            }
            reg.updated_ms = reg.updated_ms.max(o.updated_ms);
        }
        data.data_updated_ms = data
            .data_updated_ms
            .max(rows.iter().map(|r| r.updated_ms).max().unwrap_or(0));

        // By-registrar index of the group.
        let mut by_reg: Vec<u32> = (0..offers.len() as u32).collect();
        by_reg.sort_by_key(|&i| offers[i as usize].registrar);
        data.by_registrar
            .extend(by_reg.into_iter().map(|i| RegistrarOffer {
                registrar: offers[i as usize].registrar,
                offer: first + i,
            }));
        data.offers.extend(offers);

        // History of the TLD, by (registrar, date).
        hist.sort_by_key(|h| (reg_pos[h.registrar.as_str()], h.date));
        data.history.extend(hist.iter().map(|h| Change {
            registrar: reg_pos[h.registrar.as_str()],
            date: h.date,
            register: cents(h.register),
            renew: cents(h.renew),
            transfer: cents(h.transfer),
        }));
        data.tlds.push(tld);
        if text.0.len() > u32::MAX as usize {
            return Err(BuildError::TooLarge(format!(
                "text passed 4 GiB at TLD {name}"
            )));
        }
    }

    add_registrar_lists(&mut data);
    add_versions(&mut data, source, &reg_pos);
    add_catalogue(&mut data, &mut text, source);
    if text.0.len() > u32::MAX as usize {
        return Err(BuildError::TooLarge(
            "text passed 4 GiB in the catalogue".into(),
        ));
    }

    // TLD hash table: at most half full, so probes stay short and a miss ends quickly.
    let size = (data.tlds.len() * 2).next_power_of_two().max(8);
    let mut table = vec![0u32; size];
    for (i, t) in data.tlds.iter().enumerate() {
        let name = &text.0[t.name.start as usize..t.name.end as usize];
        let mut slot = name_hash(name) as usize & (size - 1);
        while table[slot] != 0 {
            slot = (slot + 1) & (size - 1);
        }
        table[slot] = i as u32 + 1;
    }
    data.tld_table = table;
    data.text = text.0;

    let report_counts = (
        data.tlds.len(),
        data.registrars.len(),
        data.offers.len(),
        data.offers.iter().filter(|o| o.register != NONE).count(),
        data.history.len(),
    );
    let payload = rkyv::to_bytes::<rkyv::rancor::Error>(&data)
        .map_err(|e| BuildError::Archive(e.to_string()))?;
    let header = Header {
        version: FORMAT_VERSION,
        payload_len: payload.len() as u64,
        content_hash: xxhash_rust::xxh3::xxh3_128(&payload),
        data_updated_ms: data.data_updated_ms,
        built_at_ms: opts.built_at_ms,
    };
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(&header.to_bytes());
    bytes.extend_from_slice(&payload);
    let (tlds, registrars, offers, sellers, changes) = report_counts;
    let report = BuildReport {
        tlds,
        registrars,
        offers,
        sellers,
        changes,
        bytes: bytes.len(),
        hash_hex: header.hash_hex(),
    };
    Ok((bytes, report))
}

/// What a seller's 5-year cost is ranked by for a TLD's `lowest_5y_offer`: the first
/// year plus four renewals, cents, a price not offered counting 0. The snapshot's open
/// checks the stored choice with the same function.
pub fn five_year_order(register: u32, renew: u32) -> u64 {
    let cents = |c: u32| if c == NONE { 0 } else { u64::from(c) };
    cents(register) + 4 * cents(renew)
}

/// Each registrar's price list (its offers in TLD name order) and the number of TLDs
/// where it ranks first.
fn add_registrar_lists(data: &mut SnapshotData) {
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); data.registrars.len()];
    // Offers are grouped by TLD in name order, so each list comes out in name order.
    for (i, o) in data.offers.iter().enumerate() {
        lists[o.registrar as usize].push(i as u32);
    }
    for t in &data.tlds {
        if t.sellers > 0 {
            let o = &data.offers[t.first_offer as usize];
            data.registrars[o.registrar as usize].cheapest_in += 1;
        }
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
