//! Synthetic price source generator.
//!
//! Writes the canonical price source of docs/IMPORT.md (`registrars.csv`,
//! `prices.csv`, `history.csv`) at any size, from a seed: the same [`Config`] always
//! gives the same bytes. The numbers are made up but shaped like the real feeds:
//!
//! - TLD names: the 22 free TLDs of the free plan first, then real-looking gTLDs and ccTLDs,
//!   then generated names; about 8% are second-level suffixes (`co.xx`, `com.xx`) and
//!   about 1% internationalised names in `xn--` form (real Punycode of Cyrillic or CJK
//!   labels, so `tldsnap::tld::normalize` maps the Unicode form to the same string).
//! - Registrars: keys matching `[a-z0-9][a-z0-9_-]{0,63}`, display names of which some
//!   need JSON escaping (a quote, a backslash, an ampersand, non-ASCII, a comma that
//!   needs CSV quoting).
//! - Prices: a per-TLD wholesale price, a per-registrar markup and price ending
//!   (`.99`, `.88`, `.00`, exact); first-year promos below renewal; renewal-only rows
//!   (register empty, renew present) and a few TLDs that nobody sells; missing transfer
//!   prices and free transfers; exact ties in `register` and in `(register, renew)` so
//!   that the registrar-key tie rule matters; a few premium TLDs above 1,000.
//! - History: for a share of the offers, one to four dated change points since
//!   2025-02-01, the last one equal to the current prices.
//! - Rates (`rates.csv`): the euro reference rates of the ECB's 30 currencies on the
//!   data date, each a typical level moved by up to ±5% from the seed, rounded to five
//!   significant digits as the ECB publishes them.
//!
//! This file uses `std` and the crate's own calendar (`tldsnap::time`): the benches and
//! tests include it with `#[path = "../tools/synth/gen.rs"] mod synth;` (`gen` is a
//! reserved keyword in edition 2024), and the `tldsnap-synth` binary wraps it.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use tldsnap::time::{MS_PER_DAY, days_from_civil, write_date, write_iso_millis};

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Number of distinct TLDs (each gets at least one row).
    pub tlds: usize,
    /// Number of registrars (1 to 10,000).
    pub registrars: usize,
    /// Average share of (tld, registrar) pairs that have a row, 0.0 to 1.0.
    pub density: f64,
    /// PRNG seed: the same seed gives the same bytes.
    pub seed: u64,
    /// Whether to write `history.csv`.
    pub history: bool,
}

impl Config {
    /// S: the standard size, 3,428 TLDs x 60 registrars, ~60% dense (~123k rows).
    pub fn small() -> Config {
        Config {
            tlds: 3_428,
            registrars: 60,
            density: 0.6,
            seed: 1,
            history: true,
        }
    }

    /// L: ten times S's offers, 34,280 TLDs x 60 registrars (~1.23M rows).
    pub fn large() -> Config {
        Config {
            tlds: 34_280,
            registrars: 60,
            density: 0.6,
            seed: 1,
            history: true,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// TLDs written (distinct names in `prices.csv`).
    pub tlds: usize,
    /// Rows of `registrars.csv`.
    pub registrars: usize,
    /// Rows of `prices.csv`.
    pub rows: usize,
    /// Rows with a register price (the registrar sells the TLD).
    pub sellers: usize,
    /// Rows with an empty register price and a renew price.
    pub renewal_only: usize,
    /// TLDs that no registrar sells (every row renewal-only).
    pub unsold_tlds: usize,
    /// Rows with an empty transfer price.
    pub missing_transfer: usize,
    /// Rows whose register price is below their renew price.
    pub promos: usize,
    /// Rows whose (register, renew) copies another seller of the same TLD.
    pub forced_ties: usize,
    /// TLDs whose register price is above 1,000 at some registrar.
    pub premium_tlds: usize,
    /// Rows of `history.csv`.
    pub history_rows: usize,
}

/// The 22 TLDs that every plan may see (the free plan's), in the specification's order.
pub const FREE_TLDS: [&str; 22] = [
    "com", "net", "org", "co", "io", "ai", "me", "info", "us", "tech", "dev", "biz", "so",
    "online", "site", "store", "shop", "app", "blog", "xyz", "uk", "de",
];

/// Real-looking names that follow the free TLDs.
const KNOWN_TLDS: &[&str] = &[
    "co.uk",
    "org.uk",
    "me.uk",
    "fr",
    "nl",
    "eu",
    "ca",
    "au",
    "com.au",
    "net.au",
    "jp",
    "ch",
    "at",
    "be",
    "es",
    "it",
    "se",
    "no",
    "dk",
    "fi",
    "pl",
    "cz",
    "pt",
    "ie",
    "nz",
    "co.nz",
    "in",
    "co.in",
    "br",
    "com.br",
    "mx",
    "com.mx",
    "club",
    "top",
    "live",
    "pro",
    "email",
    "cloud",
    "space",
    "website",
    "agency",
    "digital",
    "studio",
    "design",
    "news",
    "world",
    "life",
    "today",
    "media",
    "group",
    "network",
    "solutions",
    "company",
    "center",
    "xn--80aswg",
    "xn--p1ai",
    "xn--80asehdb",
    "xn--mk1bu44c",
    "xn--fiqs8s",
    "xn--3ds443g",
    "games",
    "global",
    "guru",
    "photography",
];

/// Registrars that come first, with display names that need escaping.
const KNOWN_REGISTRARS: [(&str, &str); 16] = [
    ("dynadot", "Dynadot"),
    ("porkbun", "Porkbun"),
    ("namecheap", "Namecheap"),
    ("cloudflare", "Cloudflare"),
    ("openprovider", "Openprovider"),
    ("route53", "Amazon Route 53"),
    ("nira", "NIRA"),
    ("mueller-soehne", "Müller & Söhne Domains"),
    ("best_names", "\"Best\" Names, Ltd"),
    ("dominios-sp", "Domínios São Paulo"),
    ("back-slash", "Back\\Slash Hosting"),
    ("name-ok", "Name.ok <Registrar>"),
    ("tokyo-dns", "東京ドメイン"),
    ("a1", "A1 Registry & Co."),
    ("zz-top-level", "ZZ Top-Level 'Domains'"),
    ("9names", "9 Names"),
];

const CONSONANTS: &[u8] = b"bcdfghjklmnprstvwxz";
const VOWELS: &[u8] = b"aeiou";

/// First day of price history (the specification keeps history since February 2025).
const HISTORY_START: (i64, u32, u32) = (2025, 2, 1);
/// Day the newest price was seen: every `updated_at` falls in the 45 days before it.
const DATA_DATE: (i64, u32, u32) = (2026, 8, 22);

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, passes BigCrush; good enough for
/// test data and fully determined by its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for one seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for our `n`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// How a registrar ends its prices.
#[derive(Debug, Clone, Copy)]
enum Ending {
    /// `x.99`
    NinetyNine,
    /// `x.88`
    EightyEight,
    /// `x.00`
    Round,
    /// Whatever the markup gives.
    Exact,
}

#[derive(Debug, Clone)]
struct Registrar {
    key: String,
    name: String,
    homepage: String,
    /// Percentage markup over wholesale, in 1/1000.
    markup_permille: u64,
    /// Fixed fee in cents.
    fee: u64,
    ending: Ending,
    /// Probability of carrying a TLD (before the density scaling of rare TLDs).
    coverage: f64,
    /// Probability of a first-year promo on an offer.
    promo_rate: f64,
    /// Probability of no transfer price.
    no_transfer_rate: f64,
    /// Whether `12.00` is written `12` and `10.50` `10.5`.
    short_decimals: bool,
}

/// Writes the source files (`registrars.csv`, `prices.csv`, `rates.csv` and, with
/// history, `history.csv`) into `dir` (created if missing) and returns what was
/// written. Without history, a `history.csv` left in `dir` by an earlier run is removed
/// so that the directory stays one consistent source.
pub fn write_source(cfg: &Config, dir: &Path) -> io::Result<Stats> {
    fs::create_dir_all(dir)?;
    let open = |name: &str| -> io::Result<BufWriter<fs::File>> {
        Ok(BufWriter::with_capacity(
            1 << 20,
            fs::File::create(dir.join(name))?,
        ))
    };
    let mut registrars = open("registrars.csv")?;
    let mut prices = open("prices.csv")?;
    let stats = if cfg.history {
        let mut history = open("history.csv")?;
        let stats = generate(cfg, &mut registrars, &mut prices, &mut history)?;
        history.flush()?;
        stats
    } else {
        let path = dir.join("history.csv");
        if path.exists() {
            fs::remove_file(path)?;
        }
        generate(cfg, &mut registrars, &mut prices, io::sink())?
    };
    registrars.flush()?;
    prices.flush()?;
    let mut rates = open("rates.csv")?;
    write_rates(cfg.seed, &mut rates)?;
    rates.flush()?;
    Ok(stats)
}

/// Typical units per euro of the ECB's reference currencies (their order in its feed).
const RATE_LEVELS: [(&str, f64); 30] = [
    ("USD", 1.10),
    ("JPY", 160.0),
    ("CZK", 25.0),
    ("DKK", 7.46),
    ("GBP", 0.85),
    ("HUF", 390.0),
    ("PLN", 4.30),
    ("RON", 4.97),
    ("SEK", 11.3),
    ("CHF", 0.95),
    ("ISK", 150.0),
    ("NOK", 11.6),
    ("TRY", 38.0),
    ("AUD", 1.65),
    ("BRL", 6.0),
    ("CAD", 1.50),
    ("CNY", 7.90),
    ("HKD", 8.60),
    ("IDR", 17800.0),
    ("ILS", 4.0),
    ("INR", 92.0),
    ("KRW", 1500.0),
    ("MXN", 20.0),
    ("MYR", 4.90),
    ("NZD", 1.80),
    ("PHP", 62.0),
    ("SGD", 1.45),
    ("THB", 37.0),
    ("ZAR", 20.0),
    ("EUR", 1.0),
];

/// Writes `rates.csv`: every currency of [`RATE_LEVELS`] on the data date, from its own
/// stream of `seed` (so the other files do not depend on it). Returns the rows written.
pub fn write_rates<W: Write>(seed: u64, mut out: W) -> io::Result<usize> {
    let mut rng = Rng::new(seed ^ 0x5A5A_0000_5A5A_0002);
    let (y, m, d) = DATA_DATE;
    let day = days_from_civil(y, m, d);
    let mut buf = b"currency,per_eur,date\n".to_vec();
    for (code, level) in RATE_LEVELS {
        buf.extend_from_slice(code.as_bytes());
        buf.push(b',');
        if code == "EUR" {
            buf.push(b'1');
        } else {
            let rate = level * (0.95 + 0.1 * rng.unit());
            // Five significant digits, at most 4 decimals: 1.1034, 160.12, 17812.
            let decimals = (4 - rate.log10().floor() as i32).clamp(0, 4) as usize;
            buf.extend_from_slice(format!("{rate:.decimals$}").as_bytes());
        }
        buf.push(b',');
        write_date(day, &mut buf);
        buf.push(b'\n');
    }
    out.write_all(&buf)?;
    Ok(RATE_LEVELS.len())
}

/// Generates the source into three writers (history is written only when
/// `cfg.history`). Returns an `InvalidInput` error for a config it cannot honour.
pub fn generate<R: Write, P: Write, H: Write>(
    cfg: &Config,
    mut registrars_out: R,
    mut prices_out: P,
    mut history_out: H,
) -> io::Result<Stats> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
    if cfg.tlds == 0 || cfg.tlds > 5_000_000 {
        return Err(invalid("tlds must be between 1 and 5,000,000"));
    }
    if cfg.registrars == 0 || cfg.registrars > 10_000 {
        return Err(invalid("registrars must be between 1 and 10,000"));
    }
    if !(cfg.density > 0.0 && cfg.density <= 1.0) {
        return Err(invalid("density must be in (0, 1]"));
    }

    let mut rng = Rng::new(cfg.seed);
    // History draws from its own stream, so that prices.csv does not depend on whether
    // history is written.
    let mut history_rng = Rng::new(cfg.seed ^ 0xA5A5_A5A5_0000_0001);
    let regs = make_registrars(cfg, &mut rng);
    let tlds = make_tlds(cfg.tlds, &mut rng);
    let mut stats = Stats {
        tlds: tlds.len(),
        registrars: regs.len(),
        ..Stats::default()
    };

    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"key,name,homepage\n");
    for r in &regs {
        csv_field(&r.key, &mut buf);
        buf.push(b',');
        csv_field(&r.name, &mut buf);
        buf.push(b',');
        csv_field(&r.homepage, &mut buf);
        buf.push(b'\n');
    }
    registrars_out.write_all(&buf)?;
    buf.clear();

    let data_day = days_from_civil(DATA_DATE.0, DATA_DATE.1, DATA_DATE.2);
    let history_day = days_from_civil(HISTORY_START.0, HISTORY_START.1, HISTORY_START.2);
    let mut hist: Vec<u8> = Vec::with_capacity(1 << 16);
    if cfg.history {
        hist.extend_from_slice(b"date,tld,registrar,register,renew,transfer\n");
    }
    buf.extend_from_slice(b"tld,registrar,register,renew,transfer,currency,updated_at\n");

    // Per-TLD scratch: which registrars carry it, and the sellers' prices so far.
    let mut carriers: Vec<usize> = Vec::with_capacity(regs.len());
    let mut sold: Vec<(u64, u64)> = Vec::with_capacity(regs.len());
    for (ti, tld) in tlds.iter().enumerate() {
        let free = ti < FREE_TLDS.len();
        let wholesale = wholesale_cents(&mut rng);
        // A few TLDs are renewal-only everywhere (sunset or restricted registries).
        let unsold = !free && rng.chance(0.004);
        // Rare TLDs (long names, deep suffixes) are carried by fewer registrars.
        let popularity = if free {
            1.6
        } else if tld.contains('.') {
            0.7
        } else {
            rng.unit() * 0.8 + 0.6
        };
        carriers.clear();
        for (ri, r) in regs.iter().enumerate() {
            let p = (r.coverage * popularity).min(if free { 0.98 } else { 1.0 });
            if rng.chance(p) {
                carriers.push(ri);
            }
        }
        if carriers.is_empty() {
            carriers.push(rng.below(regs.len() as u64) as usize);
        }
        sold.clear();
        let mut any_premium_row = false;
        let mut any_seller = false;
        for &ri in &carriers {
            let r = &regs[ri];
            let renew = r.price(wholesale, &mut rng);
            // Renewal-only rows: a registrar that keeps renewing a TLD it no longer sells.
            let renewal_only = unsold || (!free && rng.chance(0.02));
            let mut register = if renewal_only {
                None
            } else if rng.chance(r.promo_rate) {
                // First-year promo: 10% to 85% of renewal, ending like the registrar's,
                // never below 0.99.
                let pct = rng.range(10, 85);
                let promo = r.end(renew * pct / 100).max(99);
                Some(if promo < renew { promo } else { renew })
            } else if rng.chance(0.1) {
                // Slightly above renewal (setup fee), as some registrars do.
                Some(r.end(renew + renew / 20 + 100))
            } else {
                Some(renew)
            };
            let mut renew = renew;
            // Exact ties with an earlier seller: same register (and sometimes renew), so
            // ranking falls back to renew and then to the registrar key.
            if register.is_some() && !sold.is_empty() && rng.chance(0.06) {
                let (reg2, ren2) = sold[rng.below(sold.len() as u64) as usize];
                register = Some(reg2);
                if rng.chance(0.5) {
                    renew = ren2;
                } else {
                    renew = renew.max(reg2);
                }
                stats.forced_ties += 1;
            }
            let transfer = if rng.chance(r.no_transfer_rate) {
                None
            } else if rng.chance(0.01) {
                Some(0) // a free transfer is a real price
            } else if rng.chance(0.8) {
                Some(renew)
            } else {
                Some(r.end(renew - renew / 10))
            };
            match register {
                Some(reg) => {
                    stats.sellers += 1;
                    any_seller = true;
                    if reg < renew {
                        stats.promos += 1;
                    }
                    if reg > 100_000 {
                        any_premium_row = true;
                    }
                    sold.push((reg, renew));
                }
                None => stats.renewal_only += 1,
            }
            if transfer.is_none() {
                stats.missing_transfer += 1;
            }
            stats.rows += 1;

            // prices.csv row
            buf.extend_from_slice(tld.as_bytes());
            buf.push(b',');
            buf.extend_from_slice(r.key.as_bytes());
            buf.push(b',');
            write_price(register, r.short_decimals, &mut buf);
            buf.push(b',');
            write_price(Some(renew), r.short_decimals, &mut buf);
            buf.push(b',');
            write_price(transfer, r.short_decimals, &mut buf);
            buf.extend_from_slice(b",USD,");
            let updated_day = data_day - rng.below(45) as i64;
            let ms_of_day = rng.below(86_400_000);
            write_iso_millis(updated_day * MS_PER_DAY + ms_of_day as i64, &mut buf);
            buf.push(b'\n');

            if cfg.history && history_rng.chance(0.2) {
                stats.history_rows += write_history(
                    tld,
                    r,
                    (register, renew, transfer),
                    history_day,
                    updated_day,
                    &mut history_rng,
                    &mut hist,
                );
            }
        }
        if any_premium_row {
            stats.premium_tlds += 1;
        }
        if !any_seller {
            stats.unsold_tlds += 1;
        }
        if buf.len() > 1 << 20 {
            prices_out.write_all(&buf)?;
            buf.clear();
        }
        if hist.len() > 1 << 20 {
            history_out.write_all(&hist)?;
            hist.clear();
        }
    }
    prices_out.write_all(&buf)?;
    if cfg.history {
        history_out.write_all(&hist)?;
    }
    Ok(stats)
}

type Prices = (Option<u64>, u64, Option<u64>);

/// One to four change points of one offer, oldest first, the last one being the current
/// prices dated by the day they were last updated. Returns the number of rows written.
fn write_history(
    tld: &str,
    r: &Registrar,
    current: Prices,
    first_day: i64,
    last_day: i64,
    rng: &mut Rng,
    out: &mut Vec<u8>,
) -> usize {
    let changes = rng.range(1, 4) as usize;
    // Distinct days strictly before `last_day`, ascending.
    let span = (last_day - first_day).max(1) as u64;
    let mut days: Vec<i64> = (0..changes - 1)
        .map(|_| first_day + rng.below(span) as i64)
        .collect();
    days.sort_unstable();
    days.dedup();
    days.push(last_day);
    let n = days.len();
    for (i, day) in days.into_iter().enumerate() {
        let (register, renew, transfer) = if i + 1 == n {
            current
        } else {
            // Older prices drift by -15%..+10% (prices mostly went up since).
            let drift = |c: u64, rng: &mut Rng| -> u64 {
                let pct = rng.range(85, 110);
                r.end((c * pct / 100).max(1))
            };
            let renew = drift(current.1, rng);
            let register = current.0.map(|c| drift(c, rng));
            let transfer = current.2.map(|c| if c == 0 { 0 } else { drift(c, rng) });
            (register, renew, transfer)
        };
        write_date(day, out);
        out.push(b',');
        out.extend_from_slice(tld.as_bytes());
        out.push(b',');
        out.extend_from_slice(r.key.as_bytes());
        out.push(b',');
        write_price(register, r.short_decimals, out);
        out.push(b',');
        write_price(Some(renew), r.short_decimals, out);
        out.push(b',');
        write_price(transfer, r.short_decimals, out);
        out.push(b'\n');
    }
    n
}

impl Registrar {
    /// The registrar's renewal price for a wholesale price.
    fn price(&self, wholesale: u64, rng: &mut Rng) -> u64 {
        // Per-offer noise of +-4% around the registrar's markup.
        let permille = self.markup_permille + rng.below(81) - 40;
        let cents = wholesale * permille / 1000 + self.fee;
        self.end(cents.max(99))
    }

    /// Rounds a price to the registrar's usual ending.
    fn end(&self, cents: u64) -> u64 {
        let dollars = cents / 100;
        match self.ending {
            Ending::NinetyNine => dollars * 100 + 99,
            Ending::EightyEight => dollars * 100 + 88,
            Ending::Round => (dollars.max(1)) * 100,
            Ending::Exact => cents,
        }
    }
}

fn make_registrars(cfg: &Config, rng: &mut Rng) -> Vec<Registrar> {
    let mut keys: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(cfg.registrars);
    for i in 0..cfg.registrars {
        let (key, name) = if let Some((k, n)) = KNOWN_REGISTRARS.get(i) {
            (k.to_string(), n.to_string())
        } else {
            loop {
                let word = word(rng, 2, 3);
                let key = match rng.below(4) {
                    0 => format!("{word}-domains"),
                    1 => format!("{word}_reg"),
                    2 => format!("{word}{}", rng.below(100)),
                    _ => word.clone(),
                };
                if keys.contains(&key) {
                    continue;
                }
                let mut display = capitalise(&word);
                display.push_str(match rng.below(5) {
                    0 => " Domains",
                    1 => " Registrar Inc.",
                    2 => " & Partners",
                    3 => ".com",
                    _ => " Names",
                });
                break (key, display);
            }
        };
        keys.insert(key.clone());
        let homepage = format!("https://www.{}.example/", key.replace('_', "-"));
        let ending = match rng.below(4) {
            0 => Ending::NinetyNine,
            1 => Ending::EightyEight,
            2 => Ending::Round,
            _ => Ending::Exact,
        };
        out.push(Registrar {
            key,
            name,
            homepage,
            markup_permille: rng.range(1000, 1350),
            fee: rng.below(300),
            ending,
            coverage: (cfg.density * (0.5 + rng.unit())).min(1.0),
            promo_rate: rng.unit() * 0.3,
            no_transfer_rate: rng.unit() * 0.16,
            short_decimals: rng.chance(0.3),
        });
    }
    out
}

/// Wholesale price in cents: mostly $5-$30, some up to $100, 0.5% premium ($700-$9,000).
fn wholesale_cents(rng: &mut Rng) -> u64 {
    let roll = rng.unit();
    if roll < 0.005 {
        rng.range(70_000, 900_000)
    } else if roll < 0.15 {
        rng.range(3_000, 10_000)
    } else {
        rng.range(400, 3_000)
    }
}

fn make_tlds(n: usize, rng: &mut Rng) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::with_capacity(n * 2);
    let mut out: Vec<String> = Vec::with_capacity(n);
    for name in FREE_TLDS.iter().chain(KNOWN_TLDS.iter()) {
        if out.len() == n {
            return out;
        }
        if seen.insert(name.to_string()) {
            out.push(name.to_string());
        }
    }
    // Two-letter country codes for second-level suffixes.
    let cc: Vec<String> = (0..200).map(|_| word_len(rng, 2)).collect();
    let mut attempts = 0usize;
    while out.len() < n {
        attempts += 1;
        let roll = rng.unit();
        let name = if roll < 0.08 {
            let sld = ["co", "com", "net", "org", "ac", "gov"][rng.below(6) as usize];
            format!("{sld}.{}", cc[rng.below(cc.len() as u64) as usize])
        } else if roll < 0.09 {
            format!("xn--{}", punycode(&unicode_label(rng)))
        } else {
            // Longer names once the short ones are used up.
            let syllables = 1 + (attempts / (n.max(1000) * 4)) as u64;
            let mut w = word(rng, syllables, syllables + 2);
            if rng.chance(0.05) {
                w.push_str(["-online", "-shop", "-web"][rng.below(3) as usize]);
            }
            if w.len() > 63 {
                w.truncate(63);
                while w.ends_with('-') {
                    w.pop();
                }
            }
            w
        };
        if seen.insert(name.clone()) {
            out.push(name);
        }
    }
    out
}

/// A pronounceable lowercase word of `lo..=hi` consonant-vowel syllables.
fn word(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let syllables = rng.range(lo, hi);
    let mut w = String::with_capacity(syllables as usize * 2 + 1);
    for _ in 0..syllables {
        w.push(CONSONANTS[rng.below(CONSONANTS.len() as u64) as usize] as char);
        w.push(VOWELS[rng.below(VOWELS.len() as u64) as usize] as char);
    }
    if rng.chance(0.3) {
        w.push(CONSONANTS[rng.below(CONSONANTS.len() as u64) as usize] as char);
    }
    w
}

fn word_len(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| (b'a' + rng.below(26) as u8) as char)
        .collect()
}

fn capitalise(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A lowercase Cyrillic (U+0430..U+044F) or CJK (U+4E00..U+62FF) label of 2 to 6
/// characters; IDNA maps both to themselves.
pub fn unicode_label(rng: &mut Rng) -> String {
    let len = rng.range(2, 6);
    let cjk = rng.chance(0.5);
    (0..len)
        .map(|_| {
            let cp = if cjk {
                0x4E00 + rng.below(0x1500)
            } else {
                0x0430 + rng.below(32)
            };
            char::from_u32(cp as u32).unwrap_or('a')
        })
        .collect()
}

/// RFC 3492 Punycode of one label (without the `xn--` prefix).
pub fn punycode(label: &str) -> String {
    const BASE: u32 = 36;
    const TMIN: u32 = 1;
    const TMAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    fn adapt(mut delta: u32, points: u32, first: bool) -> u32 {
        delta /= if first { DAMP } else { 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        k + (BASE - TMIN + 1) * delta / (delta + SKEW)
    }
    fn digit(d: u32) -> char {
        (if d < 26 {
            b'a' + d as u8
        } else {
            b'0' + (d - 26) as u8
        }) as char
    }
    let cps: Vec<u32> = label.chars().map(|c| c as u32).collect();
    let mut out: String = label.chars().filter(char::is_ascii).collect();
    let basic = out.len() as u32;
    let mut h = basic;
    if basic > 0 {
        out.push('-');
    }
    let (mut n, mut delta, mut bias) = (128u32, 0u32, 72u32);
    while (h as usize) < cps.len() {
        let m = cps.iter().copied().filter(|&c| c >= n).min().unwrap_or(n);
        delta = delta.wrapping_add((m - n).wrapping_mul(h + 1));
        n = m;
        for &c in &cps {
            if c < n {
                delta = delta.wrapping_add(1);
            }
            if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        TMIN
                    } else if k >= bias + TMAX {
                        TMAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    out.push(digit(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                out.push(digit(q));
                bias = adapt(delta, h + 1, h == basic);
                delta = 0;
                h += 1;
            }
        }
        delta = delta.wrapping_add(1);
        n += 1;
    }
    out
}

/// RFC 4180: quote a field that holds a comma, a quote or a line break.
fn csv_field(s: &str, out: &mut Vec<u8>) {
    if s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        out.push(b'"');
        for b in s.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// A price as a decimal string: `12.50`, or with `short` `12.5` and `12`.
fn write_price(cents: Option<u64>, short: bool, out: &mut Vec<u8>) {
    let Some(c) = cents else { return };
    write_u64(c / 100, out);
    let frac = c % 100;
    if short && frac == 0 {
        return;
    }
    out.push(b'.');
    if short && frac % 10 == 0 {
        out.push(b'0' + (frac / 10) as u8);
    } else {
        out.push(b'0' + (frac / 10) as u8);
        out.push(b'0' + (frac % 10) as u8);
    }
}

fn write_u64(mut v: u64, out: &mut Vec<u8>) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}
