//! `tldsnap import` against the real binary: excerpts of every real feed (with their
//! awkward rows) in `tests/fixtures/feeds`, broken and undated feeds, duplicate IDN
//! keys, and the shipped `snapshots/source` being exactly what the importer makes of
//! `snapshots/feeds`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn root(rel: &str) -> PathBuf {
    Path::new(ROOT).join(rel)
}

/// A fresh, empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("import-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn import(feeds: &Path, output: &Path) -> Output {
    Command::new(BIN)
        .args(["import", "--feeds"])
        .arg(feeds)
        .arg("--tlds")
        .arg(root("snapshots/tlds"))
        .arg("--fx")
        .arg(root("snapshots/fx"))
        .arg("--output")
        .arg(output)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "import failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `prices.csv` as (tld, registrar) -> [register, renew, transfer, currency, updated_at,
/// original_currency, original_register, original_renew, original_transfer, rate_date,
/// regular_register, icann_fee, icann_fee_included, register_years] (the columns after
/// those, promotion to member prices, are checked by tests/buyer_prices.rs and
/// tests/collect.rs).
fn prices(dir: &Path) -> HashMap<(String, String), Vec<String>> {
    let mut reader = csv::Reader::from_path(dir.join("prices.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "tld",
            "registrar",
            "register",
            "renew",
            "transfer",
            "currency",
            "updated_at",
            "original_currency",
            "original_register",
            "original_renew",
            "original_transfer",
            "rate_date",
            "regular_register",
            "icann_fee",
            "icann_fee_included",
            "register_years",
            "promotion",
            "coupon_code",
            "coupon_register",
            "member_register",
            "member_renew",
            "member_transfer"
        ]
    );
    let mut map = HashMap::new();
    for r in reader.records() {
        let r = r.unwrap();
        let key = (r[0].to_string(), r[1].to_string());
        let old = map.insert(
            key.clone(),
            r.iter().skip(2).take(14).map(String::from).collect(),
        );
        assert!(old.is_none(), "duplicate row {key:?}");
    }
    map
}

fn history(dir: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(dir.join("history.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        ["date", "tld", "registrar", "register", "renew", "transfer"]
    );
    reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect()
}

fn row<'a>(
    p: &'a HashMap<(String, String), Vec<String>>,
    tld: &str,
    registrar: &str,
) -> Option<&'a [String]> {
    p.get(&(tld.to_string(), registrar.to_string()))
        .map(|v| &v[..3])
}

fn has_tld(p: &HashMap<(String, String), Vec<String>>, tld: &str) -> bool {
    p.keys().any(|(t, _)| t == tld)
}

/// The last history row of every (tld, registrar) is its prices.csv row, and a name
/// that left prices.csv ends its history with an all-empty row.
fn assert_history_ends_at_prices(dir: &Path) {
    let p = prices(dir);
    let mut last: HashMap<(String, String), Vec<String>> = HashMap::new();
    for r in history(dir) {
        last.insert((r[1].clone(), r[2].clone()), r[3..].to_vec());
    }
    for (key, v) in &p {
        assert_eq!(
            last.get(key),
            Some(&v[..3].to_vec()),
            "history of {key:?} does not end at its price"
        );
    }
    for (key, v) in &last {
        if !p.contains_key(key) {
            assert_eq!(
                v,
                &vec![String::new(); 3],
                "{key:?} left the feed without an empty history row"
            );
        }
    }
}

#[test]
fn fixture_feeds_give_the_real_facts() {
    let out_dir = scratch("facts");
    let stdout = ok(&import(&root("tests/fixtures/feeds"), &out_dir));
    let p = prices(&out_dir);

    // Dynadot: plain prices; a Unicode IDN key stored as xn--; zero prices not offered;
    // names that are not public suffixes dropped; a PSL private suffix kept.
    assert_eq!(
        row(&p, "com", "dynadot"),
        Some(&["10.88".into(), "10.88".into(), "10.88".into()][..])
    );
    assert_eq!(
        row(&p, "xyz", "dynadot"),
        Some(&["1.99".into(), "13.17".into(), "13.17".into()][..])
    );
    assert!(
        row(&p, "xn--mk1bu44c", "dynadot").is_some(),
        "닷컴 in xn-- form"
    );
    assert!(
        row(&p, "xn--55qx5d.xn--j6w193g", "dynadot").is_some(),
        "公司.香港 is an ICANN suffix"
    );
    assert!(
        !has_tld(&p, "aaa.pro"),
        "zero first-year and renewal price: not offered"
    );
    assert!(!has_tld(&p, "l.lc"), "not a public suffix");
    assert!(
        !has_tld(&p, "xn--i1b1b4ch5i.xn--h2brj9c"),
        "कंपनी.भारत is not a public suffix"
    );
    assert!(
        row(&p, "us.com", "dynadot").is_some(),
        "PSL private section counts"
    );
    assert_eq!(
        row(&p, "co.uk", "dynadot").unwrap()[2],
        "0.00",
        "free transfer"
    );

    // Porkbun: thousands separators survive, Handshake names never appear.
    assert_eq!(
        row(&p, "dealer", "porkbun"),
        Some(&["257.96".into(), "2060.23".into(), "2060.23".into()][..])
    );
    assert_eq!(row(&p, "security", "porkbun").unwrap()[0], "2060.23");
    for hs in ["xp", "txt", "0zone", "workshop"] {
        assert!(!has_tld(&p, hs), "Handshake name {hs}");
    }
    assert_eq!(row(&p, "uk", "porkbun").unwrap()[2], "0.00");

    // Namecheap: the sale price (no coupon needed) is the first-year price; Handshake
    // names are not in the root zone; a missing transfer price stays empty.
    assert_eq!(
        row(&p, "com", "namecheap"),
        Some(&["11.28".into(), "18.48".into(), "11.48".into()][..])
    );
    assert!(!has_tld(&p, "1") && !has_tld(&p, "creator"));
    assert_eq!(
        row(&p, "cm", "namecheap").unwrap()[2],
        "",
        "no transfer price"
    );

    // Openprovider: regular (non-member) prices; retired TLDs and non-suffixes dropped.
    assert_eq!(
        row(&p, "com", "openprovider"),
        Some(&["11.98".into(), "16.98".into(), "11.98".into()][..])
    );
    for gone in ["nlm", "spreadbetting", "ahmdabad.in"] {
        assert!(!has_tld(&p, gone), "{gone}");
    }

    // NIRA: converted USD prices; premium.ng is not a public suffix.
    assert_eq!(
        row(&p, "ng", "nira"),
        Some(&["9.65".into(), "9.65".into(), "9.65".into()][..])
    );
    assert!(!has_tld(&p, "premium.ng"));

    // Route 53: renewal-only TLDs keep their renewal price only.
    assert_eq!(
        row(&p, "audio", "route53"),
        Some(&["".into(), "13.00".into(), "".into()][..])
    );
    assert_eq!(
        row(&p, "com", "route53"),
        Some(&["13.00".into(), "13.00".into(), "13.00".into()][..])
    );

    // Cloudflare: price plus ICANN fee, no transfer price, scrape artefacts dropped.
    assert_eq!(
        row(&p, "com", "cloudflare"),
        Some(&["9.77".into(), "9.77".into(), "".into()][..])
    );
    assert!(!has_tld(&p, "et.io") && !has_tld(&p, "adio.io"));

    // Each price carries its own feed's date; currency is USD everywhere.
    let date = |tld: &str, r: &str| p[&(tld.to_string(), r.to_string())][4].clone();
    assert_eq!(date("com", "dynadot"), "2026-01-01T16:27:49.638Z");
    assert_eq!(date("com", "porkbun"), "2025-03-22T00:00:00.000Z");
    assert_eq!(date("com", "cloudflare"), "2024-01-07T06:15:23.000Z");
    assert_eq!(date("com", "namecheap"), "2025-10-25T06:18:28.882Z");
    assert!(p.values().all(|v| v[3] == "USD"));

    // The summary counts every dropped row by reason.
    assert!(stdout.contains("- porkbun: handshake: 4"), "{stdout}");
    assert!(
        stdout.contains("- namecheap: not in IANA root zone: 2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| dynadot | dynadot/dynadot.json | 2026-01-01 | 15 | 11 |"),
        "{stdout}"
    );

    // registrars.csv: the seven registrars with display names.
    let regs = std::fs::read_to_string(out_dir.join("registrars.csv")).unwrap();
    assert!(regs.starts_with("key,name,homepage\n"));
    assert!(regs.contains("\nroute53,Amazon Route 53,https://aws.amazon.com/route53/\n"));
    assert!(regs.contains("\nnira,NIRA,"));
    assert_eq!(regs.lines().count(), 8);
}

#[test]
fn fixture_history_rows() {
    let out_dir = scratch("history");
    ok(&import(&root("tests/fixtures/feeds"), &out_dir));
    let h = history(&out_dir);
    let find = |date: &str, tld: &str, r: &str| {
        h.iter()
            .find(|row| row[0] == date && row[1] == tld && row[2] == r)
            .map(|row| row[3..].to_vec())
    };
    // Dynadot com: 2021 promo, 2022 list price, 2026 price; first sight counts.
    assert_eq!(
        find("2021-11-22", "com", "dynadot"),
        Some(vec!["7.99".into(), "9.99".into(), "9.99".into()])
    );
    assert_eq!(
        find("2022-03-01", "com", "dynadot"),
        Some(vec!["9.99".into(), "9.99".into(), "9.99".into()])
    );
    assert_eq!(
        find("2026-01-01", "com", "dynadot"),
        Some(vec!["10.88".into(), "10.88".into(), "10.88".into()])
    );
    // Openprovider stopped listing ng in December 2025: a row with empty prices.
    assert_eq!(
        find("2025-12-02", "ng", "openprovider"),
        Some(vec![String::new(), String::new(), String::new()])
    );
    // An unchanged price gives no new row.
    assert_eq!(
        h.iter()
            .filter(|r| r[1] == "com" && r[2] == "openprovider")
            .count(),
        1
    );
    // Sorted by (tld, registrar, date), one row per (date, tld, registrar).
    let keys: Vec<(&str, &str, &str)> = h
        .iter()
        .map(|r| (r[1].as_str(), r[2].as_str(), r[0].as_str()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    assert_history_ends_at_prices(&out_dir);
    // No Handshake or dropped name in the history either.
    assert!(
        !h.iter()
            .any(|r| ["xp", "1", "premium.ng", "aaa.pro"].contains(&r[1].as_str()))
    );
}

#[test]
fn import_is_deterministic() {
    let a = scratch("det-a");
    let b = scratch("det-b");
    ok(&import(&root("tests/fixtures/feeds"), &a));
    ok(&import(&root("tests/fixtures/feeds"), &b));
    for f in ["registrars.csv", "prices.csv", "history.csv", "tlds.csv"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn unparsable_feed_fails_and_writes_nothing() {
    let dir = scratch("broken");
    let feeds = dir.join("feeds");
    copy_dir(&root("tests/fixtures/feeds"), &feeds);
    std::fs::write(
        feeds.join("porkbun/porkbun-pricing.json"),
        "{\"status\":\"SUCCESS\",\"pricing\":{\"com\":",
    )
    .unwrap();

    // No output directory yet: none appears.
    let fresh = dir.join("fresh");
    let out = import(&feeds, &fresh);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("porkbun/porkbun-pricing.json: not a Porkbun pricing response"),
        "{stderr}"
    );
    assert!(!fresh.exists());

    // An existing source stays exactly as it was.
    let existing = dir.join("existing");
    std::fs::create_dir_all(&existing).unwrap();
    std::fs::write(existing.join("prices.csv"), "old").unwrap();
    let out = import(&feeds, &existing);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(existing.join("prices.csv")).unwrap(),
        "old"
    );
    let names: Vec<_> = std::fs::read_dir(&existing)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary files left: {names:?}");
}

#[test]
fn a_feed_without_a_date_fails() {
    let dir = scratch("undated");
    let feeds = dir.join("feeds");
    copy_dir(&root("tests/fixtures/feeds"), &feeds);
    std::fs::remove_file(feeds.join("dates.csv")).unwrap();
    let out = import(&feeds, &dir.join("out"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("carries no date"), "{stderr}");
    assert!(stderr.contains("dates.csv"), "{stderr}");
    assert!(!dir.join("out").exists());
}

#[test]
fn one_idn_listed_twice_gives_one_row() {
    let dir = scratch("dup");
    let feeds = dir.join("feeds");
    std::fs::create_dir_all(feeds.join("dynadot")).unwrap();
    // The same name as Unicode and as xn--: the xn-- row (already canonical) wins.
    std::fs::write(
        feeds.join("dynadot/dynadot.json"),
        r#"{"registrar":"dynadot","updated":1767284869638,"prices":{
            "닷컴":{"register_price":9.84,"renew_price":9.84,"transfer_price":9.84,"currency":"USD"},
            "xn--mk1bu44c":{"register_price":9.99,"renew_price":9.99,"transfer_price":9.99,"currency":"USD"},
            "com":{"register_price":10.88,"renew_price":10.88,"transfer_price":10.88,"currency":"XYZ"}}}"#,
    )
    .unwrap();
    let out_dir = dir.join("out");
    let stdout = ok(&import(&feeds, &out_dir));
    let p = prices(&out_dir);
    assert_eq!(p.len(), 1);
    assert_eq!(row(&p, "xn--mk1bu44c", "dynadot").unwrap()[0], "9.99");
    assert!(
        stdout.contains("- dynadot: currency without a reference rate: 1, duplicate name: 1"),
        "{stdout}"
    );
}

#[test]
fn help_and_usage() {
    let out = Command::new(BIN)
        .args(["import", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--feeds") && text.contains("--output") && text.contains("--tlds"));
    let out = Command::new(BIN)
        .args(["import", "--feeds", "x"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "missing --output is a usage error"
    );
}

/// `snapshots/source` is what the importer makes of `snapshots/feeds`, byte for byte:
/// nobody edited the shipped source by hand, and it is not stale.
#[test]
fn shipped_source_is_a_fresh_import_of_shipped_feeds() {
    let out_dir = scratch("shipped");
    let out = Command::new(BIN)
        .args(["import", "--quiet", "--feeds"])
        .arg(root("snapshots/feeds"))
        .arg("--output")
        .arg(&out_dir)
        .output()
        .unwrap();
    ok(&out);
    assert_history_ends_at_prices(&out_dir);
    for f in ["registrars.csv", "prices.csv", "history.csv", "tlds.csv"] {
        let fresh = std::fs::read(out_dir.join(f)).unwrap();
        let shipped = std::fs::read(root("snapshots/source").join(f)).unwrap();
        assert!(
            fresh == shipped,
            "snapshots/source/{f} differs from a fresh import: re-run `tldsnap import`"
        );
    }
}

/// The data-quality report in the docs is the one the shipped feeds give: its tables in
/// docs/IMPORT.md, all of it in docs/import-report.md.
#[test]
fn the_documented_quality_report_is_current() {
    let out_dir = scratch("report");
    let out = Command::new(BIN)
        .args(["import", "--quiet", "--report", "--feeds"])
        .arg(root("snapshots/feeds"))
        .arg("--output")
        .arg(&out_dir)
        .output()
        .unwrap();
    let report = ok(&out);
    let tables = &report[..report.find("\n### far from the median").unwrap() + 1];
    assert!(tables.contains("### Flags, per registrar"), "{report}");
    let import_md = std::fs::read_to_string(root("docs/IMPORT.md")).unwrap();
    assert!(
        import_md.contains(tables),
        "docs/IMPORT.md lacks the current report tables: paste the output of \
         `tldsnap import --feeds snapshots/feeds --output snapshots/source --quiet --report` \
         up to \"### far from the median\"\n{tables}"
    );
    let full = std::fs::read_to_string(root("docs/import-report.md")).unwrap();
    assert!(
        full.ends_with(&report),
        "docs/import-report.md does not end with the current report: regenerate it"
    );
}

fn import_with(feeds: &Path, output: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["import", "--feeds"])
        .arg(feeds)
        .arg("--tlds")
        .arg(root("snapshots/tlds"))
        .arg("--fx")
        .arg(root("snapshots/fx"))
        .arg("--output")
        .arg(output)
        .args(extra)
        .output()
        .unwrap()
}

/// A feeds directory with one domainpricing file and two Glauca versions.
fn new_format_feeds(dir: &Path, gandi: &str, glauca_old: &str, glauca_new: &str) -> PathBuf {
    let feeds = dir.join("feeds");
    std::fs::create_dir_all(feeds.join("domainpricing")).unwrap();
    std::fs::create_dir_all(feeds.join("glauca")).unwrap();
    std::fs::write(feeds.join("domainpricing/gandi.net.csv"), gandi).unwrap();
    std::fs::write(feeds.join("domainpricing/PROVENANCE.txt"), "not read").unwrap();
    std::fs::write(feeds.join("glauca/glauca_2020-05-20.csv"), glauca_old).unwrap();
    std::fs::write(feeds.join("glauca/glauca_2026-07-08.csv"), glauca_new).unwrap();
    std::fs::write(
        feeds.join("dates.csv"),
        "file,date,evidence\ndomainpricing/gandi.net.csv,2026-08-16,test\n",
    )
    .unwrap();
    feeds
}

const GLAUCA_HEAD: &str = "date,tld,currency,register,renew,transfer,restore\n";

/// Every bad row of the new formats is dropped with its reason (and listed), never
/// priced: an unknown currency, a date before the rate table, negative and non-numeric
/// prices, a TLD listed twice. A price with more than two decimals is rounded.
#[test]
fn new_formats_bad_rows_are_dropped_with_a_reason() {
    let dir = scratch("new-bad");
    let feeds = new_format_feeds(
        &dir,
        "tld,registration,renewal\ncom,11,38.38\nnet,-12.99,39.98\norg,abc,39.98\nCOM,1,1\nme,26.9913,27.99\nio,,\n",
        &format!(
            "{GLAUCA_HEAD}1998-12-31,de,GBP,13.00,11.50,0.00,0.00\n2020-05-20,fi,GBP,14.99,14.99,14.99,14.99\n"
        ),
        &format!(
            "{GLAUCA_HEAD}2026-07-08,ch,CHF,9.99,9.99,0.00,0.00\n2026-07-08,li,XYZ,9.99,9.99,0.00,0.00\n\
             2026-07-08,fi,GBP,14.99,14.99,14.99,14.99\n2026-07-08,is,GBP,-1,35.83,0.00,0.00\n\
             2026-07-08,co.uk,GBP,9.17,9.17,0.00,\n2026-07-08,co.uk,GBP,1.00,1.00,0.00,\n"
        ),
    );
    let out_dir = dir.join("out");
    let stdout = ok(&import_with(
        &feeds,
        &out_dir,
        &["--list-dropped", "--report"],
    ));
    let p = prices(&out_dir);
    // Gandi: com (the first, canonical row) and me (rounded half-even) only.
    assert_eq!(row(&p, "com", "gandi").unwrap(), ["11.00", "38.38", ""]);
    assert_eq!(row(&p, "me", "gandi").unwrap(), ["26.99", "27.99", ""]);
    for tld in ["net", "org", "io"] {
        assert!(row(&p, tld, "gandi").is_none(), "{tld}");
    }
    // Glauca: CHF is in the ECB table and is converted (via EUR); GBP too.
    let ch = &p[&("ch".to_string(), "glauca".to_string())];
    assert_eq!(ch[5..10], ["CHF", "9.99", "9.99", "0.00", "2026-04-13"]);
    assert_eq!(ch[10..], ["", "", "", ""], "Glauca's list states no terms");
    // 9.99 * 1.1684 / 0.9242 = 12.6297...
    assert_eq!(ch[..3], ["12.63", "12.63", "0.00"]);
    let fi = &p[&("fi".to_string(), "glauca".to_string())];
    // 14.99 * 1.1684 / 0.87058 = 20.1183...
    assert_eq!(fi[..3], ["20.12", "20.12", "20.12"]);
    assert_eq!(fi[5], "GBP");
    let co_uk = &p[&("co.uk".to_string(), "glauca".to_string())];
    assert_eq!(co_uk[6], "9.17", "the first of two rows wins");
    for tld in ["li", "is", "de"] {
        assert!(row(&p, tld, "glauca").is_none(), "{tld}");
    }
    let dropped: Vec<&str> = stdout.lines().filter(|l| l.contains('\t')).collect();
    for line in [
        "gandi\tnet\tunreadable price",
        "gandi\torg\tunreadable price",
        "gandi\tCOM\tduplicate name",
        "gandi\tio\tnot offered (no first-year, no renewal price)",
        "glauca\tli\tcurrency without a reference rate",
        "glauca\tis\tunreadable price",
        "glauca\tco.uk\tduplicate name",
    ] {
        assert!(dropped.contains(&line), "{line:?} not in {dropped:?}");
    }
    // The 1998 row is in the old version; its history has no price for it.
    let h = history(&out_dir);
    assert!(!h.iter().any(|r| r[1] == "de"), "{h:?}");
    // The report flags the conversions at a rate older than 30 days.
    assert!(
        stdout.contains(
            "glauca fi: price of 2026-07-08 converted at the rate of 2026-04-13 (86 days older)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("### rate older than 30 days (3)"),
        "{stdout}"
    );

    // The version dated before the rate table: its row is dropped with that reason.
    let summary_line = stdout
        .lines()
        .find(|l| l.starts_with("| glauca |"))
        .unwrap();
    assert!(
        summary_line.contains("| 2 (2020-05-20 .. 2026-07-08) |"),
        "{summary_line}"
    );
}

#[test]
fn a_date_before_the_rate_table_is_a_reason_not_a_price() {
    let dir = scratch("new-before");
    let feeds = new_format_feeds(
        &dir,
        "tld,registration,renewal\ncom,11,38.38\n",
        &format!("{GLAUCA_HEAD}1998-12-31,de,GBP,13.00,11.50,0.00,0.00\n"),
        &format!("{GLAUCA_HEAD}1998-12-31,fi,GBP,14.99,14.99,14.99,14.99\n"),
    );
    let out_dir = dir.join("out");
    let stdout = ok(&import_with(&feeds, &out_dir, &["--list-dropped"]));
    assert!(
        stdout.contains("glauca\tfi\tdated before the rate table"),
        "{stdout}"
    );
    let p = prices(&out_dir);
    assert!(!p.keys().any(|(_, r)| r == "glauca"));
    assert!(!history(&out_dir).iter().any(|r| r[2] == "glauca"));
}

/// Files that are not price lists stop the import, name the file and write nothing.
#[test]
fn empty_and_unknown_new_format_files_are_refused() {
    let glauca = format!("{GLAUCA_HEAD}2020-05-20,de,GBP,13.00,11.50,0.00,0.00\n");
    let cases: [(&str, &str, &str, &str); 4] = [
        ("empty", "", "domainpricing/gandi.net.csv: empty file", ""),
        (
            "header-only",
            "tld,registration,renewal\n",
            "domainpricing/gandi.net.csv: no price rows (only a header)",
            "",
        ),
        (
            "wrong-header",
            "name,price\ncom,1\n",
            "domainpricing/gandi.net.csv: not a domainpricing price list",
            "",
        ),
        (
            "unknown-registrar",
            "tld,registration,renewal\ncom,1,1\n",
            "domainpricing/example.org.csv: no registrar is known for this file",
            "example.org.csv",
        ),
    ];
    for (name, gandi, expect, extra_file) in cases {
        let dir = scratch(&format!("new-refused-{name}"));
        let feeds = new_format_feeds(&dir, gandi, &glauca, &glauca);
        if !extra_file.is_empty() {
            std::fs::write(feeds.join("domainpricing").join(extra_file), gandi).unwrap();
        }
        let out_dir = dir.join("out");
        let out = import_with(&feeds, &out_dir, &[]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{name}: {stderr}");
        assert!(!out_dir.exists(), "{name}: nothing written");
    }
    // An empty Glauca version, and a missing rate table.
    let dir = scratch("new-refused-glauca");
    let feeds = new_format_feeds(&dir, "tld,registration,renewal\ncom,1,1\n", "", &glauca);
    let out = import_with(&feeds, &dir.join("out"), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("glauca/glauca_2020-05-20.csv: empty file"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args(["import", "--feeds"])
        .arg(&feeds)
        .arg("--tlds")
        .arg(root("snapshots/tlds"))
        .arg("--fx")
        .arg(dir.join("nowhere"))
        .arg("--output")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("eurofxref-hist.csv"), "{stderr}");
}
