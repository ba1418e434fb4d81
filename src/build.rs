//! The builder: a validated price source in, snapshot bytes out.
//!
//! Everything a request would otherwise compute is computed here, once:
//!
//! - per TLD, the offers sorted by `(register, renew, registrar key)`, renewal-only rows
//!   after them by key;
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
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::json;
use crate::price::{write_cents, write_triple};
use crate::snapshot::schema::{
    Change, NONE, Offer, Registrar, RegistrarOffer, SnapshotData, Span, Tld,
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
    Ok(source::read(REGISTRARS, PRICES, Some(HISTORY))?)
}

/// Publishes `bytes` at `path` so that a reader sees either the old file or the whole new
/// one: write a temporary file in the same directory, `fsync` it, rename it over `path`,
/// then `fsync` the directory so the rename itself survives a crash. The temporary file
/// must be in the same directory because `rename` is only atomic within one file system.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("output path has no file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(&dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

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

fn opt(c: u32) -> Option<u64> {
    (c != NONE).then_some(c as u64)
}

fn write_opt(c: u32, out: &mut Vec<u8>) {
    crate::price::write_opt_cents(opt(c), out);
}

fn write_int(v: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn avg(values: impl Iterator<Item = u32>) -> u32 {
    let (mut sum, mut n) = (0u64, 0u64);
    for v in values.filter(|v| *v != NONE) {
        sum += v as u64;
        n += 1;
    }
    // Rounded half up to the cent; an average of u32 values fits a u32.
    (sum + n / 2).checked_div(n).map_or(NONE, |a| a as u32)
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
    let mut reg_key_json = Vec::with_capacity(regs.len());
    for r in &regs {
        let name_json = text.span(|o| json::write_str(&r.name, o));
        data.registrars.push(Registrar {
            key: text.str(&r.key),
            name: text.str(&r.name),
            name_json,
            homepage: text.str(&r.homepage),
            ..Registrar::default()
        });
        let key_json = json::quoted(&r.key);
        let listing_head = text.span(|out| {
            out.extend_from_slice(b"{\"name\":");
            json::write_str(&r.name, out);
            out.extend_from_slice(b",\"key\":");
            out.extend_from_slice(key_json.as_bytes());
            out.extend_from_slice(b",\"website_url\":\"");
        });
        // Keys are [a-z0-9_-]: safe in a URL path and in a JSON string as they are.
        let listing_path = text.span(|out| {
            out.extend_from_slice(b"/registrars/");
            out.extend_from_slice(r.key.as_bytes());
            out.push(b'"');
        });
        let reg = data.registrars.last_mut().expect("just pushed");
        (reg.listing_head, reg.listing_path) = (listing_head, listing_path);
        reg_key_json.push(key_json);
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
        // Sellers first by (register, renew, key); then renewal-only by key. Registrar
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
        tld.avg_register = avg(sold.iter().map(|r| cents(r.register)));
        tld.avg_renew = avg(sold.iter().map(|r| cents(r.renew)));
        tld.avg_transfer = avg(sold.iter().map(|r| cents(r.transfer)));
        let five_year =
            |r: &PriceRow| r.register.unwrap_or(0) as u64 + 4 * r.renew.unwrap_or(0) as u64;
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
            let key_json = &reg_key_json[o.registrar as usize];
            let name_bytes = text.0[name_json.start as usize..name_json.end as usize].to_vec();
            text.span(|out| {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"rank\":");
                write_int(i as u64 + 1, out);
                out.extend_from_slice(b",\"registrar_name\":");
                out.extend_from_slice(&name_bytes);
                out.extend_from_slice(b",\"registrar_key\":");
                out.extend_from_slice(key_json.as_bytes());
                out.extend_from_slice(b",\"register_price\":");
                write_cents(o.register as u64, out);
                out.extend_from_slice(b",\"renew_price\":");
                write_cents(o.renew as u64, out);
                out.extend_from_slice(b",\"total_cost_5_year\":");
                write_cents(o.register as u64 + 4 * o.renew as u64, out);
                out.push(b'}');
            });
            o.client_end = text.pos();
        }
        tld.client_tail = text.span(|out| {
            out.extend_from_slice(b"],\"registrar_count\":");
            write_int(sellers as u64, out);
            out.push(b'}');
        });

        tld.public_tail = text.span(|out| {
            out.extend_from_slice(b"],\"registrar_count\":");
            write_int(sellers as u64, out);
            out.extend_from_slice(b",\"avg_prices\":");
            write_triple(tld.avg_register, tld.avg_renew, tld.avg_transfer, out);
            out.push(b'}');
        });

        // Price records, every row, group order, comma separated.
        tld.records_start = text.pos();
        for (i, o) in offers.iter_mut().enumerate() {
            if i > 0 {
                text.0.push(b',');
            }
            let key_json = &reg_key_json[o.registrar as usize];
            o.record = text.span(|out| {
                out.extend_from_slice(key_json.as_bytes());
                out.extend_from_slice(b":{\"register_price\":");
                write_opt(o.register, out);
                out.extend_from_slice(b",\"renew_price\":");
                write_opt(o.renew, out);
                out.extend_from_slice(b",\"transfer_price\":");
                write_opt(o.transfer, out);
                out.extend_from_slice(b",\"last_updated\":\"");
                time::write_iso_millis(o.updated_ms, out);
                out.extend_from_slice(b"\"}");
            });
        }

        // Registrar listing prices (sellers only).
        for (o, r) in offers.iter_mut().zip(&rows).take(sellers) {
            o.listing_prices = text.span(|out| {
                out.extend_from_slice(b",\"prices\":");
                write_triple(o.register, o.renew, o.transfer, out);
                if let Some(orig) = &r.original {
                    out.extend_from_slice(b",\"original_prices\":{\"currency\":");
                    json::write_str(&orig.currency, out);
                    out.extend_from_slice(b",\"register\":");
                    write_opt(o.original_register, out);
                    out.extend_from_slice(b",\"renew\":");
                    write_opt(o.original_renew, out);
                    out.extend_from_slice(b",\"transfer\":");
                    write_opt(o.original_transfer, out);
                    out.extend_from_slice(b",\"rate_date\":\"");
                    time::write_date(orig.rate_date as i64, out);
                    out.extend_from_slice(b"\"}");
                }
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
