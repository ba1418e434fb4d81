//! The synthetic generator (`tools/synth/gen.rs`, binary `tldsnap-synth`): what it writes
//! is a valid, realistic price source (contract section 2), the same for the same seed,
//! and `tldsnap build` accepts it.

#[path = "../tools/synth/gen.rs"]
mod synth;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use tldsnap::price::parse_cents;
use tldsnap::source::{HISTORY_COLUMNS, PRICES_COLUMNS, REGISTRARS_COLUMNS, is_registrar_key};
use tldsnap::time::{parse_date, parse_rfc3339};
use tldsnap::tld::normalize;

/// A fresh directory under the target dir, removed first if an earlier run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("synth")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn generate(cfg: &synth::Config) -> (Vec<u8>, Vec<u8>, Vec<u8>, synth::Stats) {
    let (mut r, mut p, mut h) = (Vec::new(), Vec::new(), Vec::new());
    let stats = synth::generate(cfg, &mut r, &mut p, &mut h).expect("generate");
    (r, p, h, stats)
}

fn records(bytes: &[u8]) -> (Vec<String>, Vec<(u64, Vec<String>)>) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(bytes);
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed CSV record");
            let line = r.position().map_or(0, |p| p.line());
            (line, r.iter().map(str::to_string).collect())
        })
        .collect();
    (header, rows)
}

fn cents(field: &str, line: u64) -> Option<u32> {
    parse_cents(field).unwrap_or_else(|e| panic!("line {line}: price {field:?}: {e}"))
}

/// (date days, register, renew, transfer): the last change seen of one (tld, registrar).
type LastChange = (i64, Option<u32>, Option<u32>, Option<u32>);
/// (tld, registrar, register, renew, transfer, updated_at ms)
type PriceRow = (String, String, Option<u32>, Option<u32>, Option<u32>, i64);
/// (date days, tld, registrar, register, renew, transfer)
type HistoryRow = (i64, String, String, Option<u32>, Option<u32>, Option<u32>);

/// The parsed S source, shared by the tests that look at its content.
struct Source {
    registrars: Vec<(String, String, String)>,
    prices: Vec<PriceRow>,
    history: Vec<HistoryRow>,
    stats: synth::Stats,
}

fn small_source() -> Source {
    let (r, p, h, stats) = generate(&synth::Config::small());

    let (header, rows) = records(&r);
    assert_eq!(header, REGISTRARS_COLUMNS);
    let registrars: Vec<_> = rows
        .into_iter()
        .map(|(_, f)| (f[0].clone(), f[1].clone(), f[2].clone()))
        .collect();

    let (header, rows) = records(&p);
    assert_eq!(header, PRICES_COLUMNS);
    let prices = rows
        .into_iter()
        .map(|(line, f)| {
            assert_eq!(f.len(), 7, "line {line}");
            assert_eq!(f[5], "USD", "line {line}");
            let ts = &f[6];
            // RFC 3339 in UTC with milliseconds, like `2026-08-22T06:46:45.031Z`.
            assert!(
                ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[19] == b'.',
                "line {line}: {ts}"
            );
            let ms = parse_rfc3339(ts).unwrap_or_else(|| panic!("line {line}: timestamp {ts}"));
            (
                f[0].clone(),
                f[1].clone(),
                cents(&f[2], line),
                cents(&f[3], line),
                cents(&f[4], line),
                ms,
            )
        })
        .collect();

    let (header, rows) = records(&h);
    assert_eq!(header, HISTORY_COLUMNS);
    let history = rows
        .into_iter()
        .map(|(line, f)| {
            let day = parse_date(&f[0]).unwrap_or_else(|| panic!("line {line}: date {}", f[0]));
            (
                day,
                f[1].clone(),
                f[2].clone(),
                cents(&f[3], line),
                cents(&f[4], line),
                cents(&f[5], line),
            )
        })
        .collect();
    Source {
        registrars,
        prices,
        history,
        stats,
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let cfg = synth::Config {
        tlds: 500,
        registrars: 25,
        density: 0.5,
        seed: 42,
        history: true,
    };
    let a = generate(&cfg);
    let b = generate(&cfg);
    assert!(
        a.0 == b.0 && a.1 == b.1 && a.2 == b.2,
        "same config, different bytes"
    );
    let c = generate(&synth::Config {
        seed: 43,
        ..cfg.clone()
    });
    assert_ne!(a.1, c.1, "another seed gave the same prices");
    // Without history, the other two files are unchanged and history stays empty.
    let d = generate(&synth::Config {
        history: false,
        ..cfg
    });
    assert_eq!((&a.0, &a.1), (&d.0, &d.1));
    assert!(d.2.is_empty());
}

#[test]
fn small_has_the_seed_scale_and_every_row_parses() {
    let src = small_source();
    let s = &src.stats;
    assert_eq!(s.tlds, 3_428);
    assert_eq!(s.registrars, 60);
    assert!(
        (110_000..140_000).contains(&s.rows),
        "S has {} rows, want ~123k",
        s.rows
    );
    assert_eq!(s.rows, src.prices.len());
    assert_eq!(s.history_rows, src.history.len());
    assert_eq!(s.sellers + s.renewal_only, s.rows);

    let keys: HashSet<&str> = src.registrars.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(keys.len(), src.registrars.len(), "duplicate registrar key");
    for (key, name, homepage) in &src.registrars {
        assert!(is_registrar_key(key), "bad registrar key {key:?}");
        assert!(!name.trim().is_empty());
        assert!(homepage.starts_with("https://"), "{homepage}");
    }

    let mut pairs = HashSet::new();
    let mut tlds: Vec<&str> = Vec::new();
    for (tld, reg, register, renew, _transfer, _ms) in &src.prices {
        // Already canonical: normalising changes nothing.
        assert_eq!(normalize(tld).as_deref(), Ok(tld.as_str()), "TLD {tld:?}");
        assert!(keys.contains(reg.as_str()), "unknown registrar {reg}");
        assert!(
            pairs.insert((tld.as_str(), reg.as_str())),
            "duplicate ({tld}, {reg})"
        );
        assert!(renew.is_some(), "({tld}, {reg}) has no renew price");
        if let (Some(a), Some(b)) = (register, renew) {
            assert!(*a > 0 && *b > 0, "({tld}, {reg}): zero price");
        }
        if tlds.last() != Some(&tld.as_str()) {
            tlds.push(tld);
        }
    }
    // Rows are grouped by TLD, the 22 free TLDs of seed 5.2 first.
    assert_eq!(tlds.len(), 3_428, "rows of one TLD are not contiguous");
    assert_eq!(&tlds[..22], &synth::FREE_TLDS[..]);
}

#[test]
fn small_is_realistic_names_promos_ties_and_gaps() {
    let src = small_source();
    let tlds: HashSet<&str> = src.prices.iter().map(|p| p.0.as_str()).collect();
    assert!(
        tlds.iter().filter(|t| t.contains('.')).count() > 100,
        "too few second-level suffixes"
    );
    assert!(tlds.contains("co.uk"));
    let idn = tlds.iter().filter(|t| t.starts_with("xn--")).count();
    assert!(idn > 10, "only {idn} xn-- names");

    // Display names that a JSON renderer must escape, and one that CSV must quote.
    let names: Vec<&str> = src.registrars.iter().map(|r| r.1.as_str()).collect();
    assert!(names.iter().any(|n| n.contains('"') && n.contains(',')));
    assert!(names.iter().any(|n| n.contains('\\')));
    assert!(names.iter().any(|n| n.contains('&')));
    assert!(names.iter().any(|n| !n.is_ascii()));

    // Per TLD: sellers' (register, renew, key).
    let mut by_tld: HashMap<&str, Vec<(u32, u32, &str)>> = HashMap::new();
    let mut renewal_only = 0;
    let (mut promos, mut no_transfer, mut free_transfer, mut premium) = (0, 0, 0, 0);
    for (tld, reg, register, renew, transfer, _) in &src.prices {
        let renew = renew.unwrap_or(0);
        match register {
            Some(r) => {
                by_tld.entry(tld).or_default().push((*r, renew, reg));
                promos += usize::from(*r < renew);
                premium += usize::from(*r > 100_000);
            }
            None => renewal_only += 1,
        }
        no_transfer += usize::from(transfer.is_none());
        free_transfer += usize::from(*transfer == Some(0));
    }
    assert_eq!(renewal_only, src.stats.renewal_only);
    assert!(renewal_only > 500, "{renewal_only} renewal-only rows");
    assert!(promos > 5_000, "{promos} first-year promos");
    assert!(no_transfer > 1_000, "{no_transfer} rows without transfer");
    assert!(free_transfer > 100, "{free_transfer} free transfers");
    assert!(premium >= 5, "{premium} offers above 1,000");
    // TLDs that exist only as renewal-only rows.
    assert!(tlds.len() - by_tld.len() >= 1, "no TLD without a seller");
    assert_eq!(tlds.len() - by_tld.len(), src.stats.unsold_tlds);

    // Exact ties: same register with different renew (renew breaks it), and the same
    // (register, renew) at two registrars (only the key breaks it).
    let (mut register_ties, mut full_ties) = (0, 0);
    for offers in by_tld.values_mut() {
        offers.sort_unstable();
        for w in offers.windows(2) {
            if w[0].0 == w[1].0 {
                if w[0].1 == w[1].1 {
                    full_ties += 1;
                } else {
                    register_ties += 1;
                }
            }
        }
    }
    assert!(register_ties > 500, "{register_ties} register-only ties");
    assert!(full_ties > 500, "{full_ties} (register, renew) ties");
}

#[test]
fn history_is_dated_ordered_and_ends_at_the_current_prices() {
    let src = small_source();
    assert!(src.history.len() > 10_000);
    let current: HashMap<(&str, &str), _> = src
        .prices
        .iter()
        .map(|p| {
            (
                (p.0.as_str(), p.1.as_str()),
                (p.2, p.3, p.4, p.5.div_euclid(86_400_000)),
            )
        })
        .collect();
    let start = parse_date("2025-02-01").expect("date");
    let mut last: HashMap<(&str, &str), LastChange> = HashMap::new();
    for (day, tld, reg, register, renew, transfer) in &src.history {
        let key = (tld.as_str(), reg.as_str());
        let now = current
            .get(&key)
            .unwrap_or_else(|| panic!("history of unknown offer {key:?}"));
        assert!(*day >= start, "{key:?}: history before February 2025");
        assert!(
            *day <= now.3,
            "{key:?}: history after the offer's updated_at"
        );
        assert!(renew.is_some());
        if let Some((prev, ..)) = last.get(&key) {
            assert!(prev < day, "{key:?}: history dates not strictly ascending");
        }
        last.insert(key, (*day, *register, *renew, *transfer));
    }
    for (key, (day, register, renew, transfer)) in last {
        let now = current[&key];
        assert_eq!(
            (register, renew, transfer, day),
            now,
            "{key:?}: last change is not the current price"
        );
    }
}

#[test]
fn idn_names_are_the_punycode_that_idna_gives() {
    let mut rng = synth::Rng::new(9);
    for _ in 0..200 {
        let label = synth::unicode_label(&mut rng);
        let expected = format!("xn--{}", synth::punycode(&label));
        assert_eq!(
            normalize(&label).as_deref(),
            Ok(expected.as_str()),
            "{label}"
        );
    }
    // RFC 3492 7.1 sample (L): Japanese.
    assert_eq!(
        synth::punycode("3年B組金八先生"),
        "3B-ww4c5e180e575a65lsy2b"
    );
    assert_eq!(synth::punycode("рф"), "p1ai");
}

#[test]
fn cli_writes_the_same_bytes_as_the_library_and_refuses_bad_flags() {
    let dir = scratch("cli");
    let out = Command::new(env!("CARGO_BIN_EXE_tldsnap-synth"))
        .args([
            "--tlds",
            "300",
            "--registrars",
            "12",
            "--density",
            "0.4",
            "--seed",
            "7",
            "--output",
        ])
        .arg(&dir)
        .output()
        .expect("run tldsnap-synth");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg = synth::Config {
        tlds: 300,
        registrars: 12,
        density: 0.4,
        seed: 7,
        history: true,
    };
    let (r, p, h, stats) = generate(&cfg);
    let read = |f: &str| std::fs::read(dir.join(f)).expect("read output");
    assert_eq!(read("registrars.csv"), r);
    assert_eq!(read("prices.csv"), p);
    assert_eq!(read("history.csv"), h);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("{} price rows", stats.rows)));

    // --no-history removes a stale history.csv so the directory stays one source.
    let out = Command::new(env!("CARGO_BIN_EXE_tldsnap-synth"))
        .args([
            "--tlds",
            "300",
            "--registrars",
            "12",
            "--seed",
            "7",
            "--no-history",
            "--output",
        ])
        .arg(&dir)
        .output()
        .expect("run tldsnap-synth");
    assert!(out.status.success());
    assert!(!dir.join("history.csv").exists());

    for bad in [
        ["--density", "0"],
        ["--density", "1.5"],
        ["--tlds", "0"],
        ["--registrars", "x"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tldsnap-synth"))
            .args(bad)
            .arg("--output")
            .arg(&dir)
            .output()
            .expect("run tldsnap-synth");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn tldsnap_builds_the_small_source() {
    let dir = scratch("build");
    let src = dir.join("source");
    let stats = synth::write_source(&synth::Config::small(), &src).expect("write source");
    let snapshot = dir.join("s.snap");
    let out = Command::new(env!("CARGO_BIN_EXE_tldsnap"))
        .args(["build", "--input"])
        .arg(&src)
        .arg("--output")
        .arg(&snapshot)
        .output()
        .expect("run tldsnap build");
    assert!(
        out.status.success(),
        "tldsnap build refused the synthetic source:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&snapshot)
        .expect("snapshot written")
        .len();
    assert!(
        size > 1_000_000,
        "snapshot of {} rows is only {size} bytes",
        stats.rows
    );
    let rates = std::fs::read(src.join("rates.csv")).expect("rates.csv written");
    let rows = tldsnap::source::read_rates(&rates[..]).expect("rates.csv is a valid rate table");
    assert_eq!(rows.len(), 30);
    let eur = rows.iter().find(|r| r.currency == "EUR").unwrap();
    assert_eq!((eur.mantissa, eur.scale), (1, 0));
    let usd = rows.iter().find(|r| r.currency == "USD").unwrap();
    let per_eur = usd.mantissa as f64 / 10f64.powi(usd.scale as i32);
    assert!(
        (1.04..=1.16).contains(&per_eur),
        "USD at {per_eur} per euro"
    );
    let inspect = Command::new(env!("CARGO_BIN_EXE_tldsnap"))
        .arg("inspect")
        .arg(&snapshot)
        .output()
        .expect("run tldsnap inspect");
    let shown = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        shown.contains("exchange rates   30 currencies, ECB reference rates of 2026-08-22"),
        "inspect does not show the synthetic rates:\n{shown}"
    );
}

#[test]
fn rates_are_seeded_and_leave_the_prices_alone() {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    synth::write_rates(1, &mut a).unwrap();
    synth::write_rates(1, &mut b).unwrap();
    synth::write_rates(2, &mut c).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    for table in [&a, &c] {
        let rows = tldsnap::source::read_rates(&table[..]).expect("a valid rate table");
        assert_eq!(rows.len(), 30);
        assert!(rows.iter().all(|r| r.date == rows[0].date));
    }
}
