//! The snapshot engine end to end: price source files on disk -> `tldsnap build` ->
//! snapshot file -> open (verify) -> queries, checked against golden bodies and against
//! a straightforward recomputation from the source rows.

#[path = "../tools/synth/gen.rs"]
mod synth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tldsnap::build::{BuildOptions, build};
use tldsnap::query::{
    self, CheapestRequest, HistoryRequest, OverviewRequest, PricesRequest, RegistrarsRequest, Shape,
};
use tldsnap::snapshot::{FORMAT_VERSION, HEADER_LEN, OpenError, Snapshot};
use tldsnap::source::{self, Source};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/source");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tldsnap-engine-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture_snapshot() -> Snapshot {
    let source = source::read_dir(Path::new(FIXTURE)).unwrap();
    let (bytes, _) = build(&source, &BuildOptions::default()).unwrap();
    Snapshot::from_bytes(&bytes).unwrap()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

// ---------------------------------------------------------------- bad input

const REGISTRARS: &str = "key,name,homepage\nalpha,Alpha,https://a.example\nbravo,Bravo,\n";
const PRICES_HEADER: &str = "tld,registrar,register,renew,transfer,currency,updated_at\n";

fn build_cli(input: &Path, output: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["build", "--input"])
        .arg(input)
        .arg("--output")
        .arg(output)
        .output()
        .unwrap()
}

#[test]
fn every_bad_row_kind_fails_the_build_and_writes_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            "com,alpha,-1.00,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:2: register price \"-1.00\": negative price",
        ),
        (
            "com,alpha,ten,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:2: register price \"ten\" is not a decimal number",
        ),
        (
            "com,alpha,1.001,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:2: register price \"1.001\": more than 2 decimals",
        ),
        (
            "com,zulu,1,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:2: unknown registrar \"zulu\"",
        ),
        (
            "com,alpha,1,2,,EUR,2026-01-01T00:00:00Z",
            "prices.csv:2: currency \"EUR\" is not USD",
        ),
        (
            "c..om,alpha,1,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:2: malformed TLD \"c..om\"",
        ),
        (
            "com,alpha,1,2,,USD,2026-01-01 noon",
            "prices.csv:2: updated_at \"2026-01-01 noon\" is not an RFC 3339 timestamp",
        ),
        (
            "com,alpha,1,2,,USD,2026-01-01T00:00:00Z\nCOM,alpha,1,2,,USD,2026-01-01T00:00:00Z",
            "prices.csv:3: duplicate row for (com, alpha)",
        ),
    ];
    let dir = temp_dir("bad-rows");
    let output = dir.join("out.snap");
    for (row, expected) in cases {
        std::fs::write(dir.join("registrars.csv"), REGISTRARS).unwrap();
        std::fs::write(dir.join("prices.csv"), format!("{PRICES_HEADER}{row}\n")).unwrap();
        let out = build_cli(&dir, &output);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{row}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{row}: expected {expected:?} in {stderr}"
        );
        assert!(!output.exists(), "{row}: a snapshot was written");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .collect();
        assert_eq!(leftovers.len(), 2, "{row}: temp files left behind");
    }
}

#[test]
fn all_bad_rows_are_listed_and_a_good_snapshot_survives_a_bad_build() {
    let dir = temp_dir("bad-many");
    let output = dir.join("out.snap");
    std::fs::write(dir.join("registrars.csv"), REGISTRARS).unwrap();
    std::fs::write(
        dir.join("prices.csv"),
        format!("{PRICES_HEADER}com,alpha,1,2,,USD,2026-01-01T00:00:00Z\n"),
    )
    .unwrap();
    assert!(build_cli(&dir, &output).status.success());
    let good = std::fs::read(&output).unwrap();

    let rows: String = (0..30)
        .map(|i| format!("t{i},alpha,1.{i:03},2,,USD,2026-01-01T00:00:00Z\n"))
        .collect();
    std::fs::write(dir.join("prices.csv"), format!("{PRICES_HEADER}{rows}")).unwrap();
    let out = build_cli(&dir, &output);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("30 bad row(s)"), "{stderr}");
    for line in 2..32 {
        assert!(
            stderr.contains(&format!("prices.csv:{line}: ")),
            "line {line} missing: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&output).unwrap(),
        good,
        "the old snapshot was touched"
    );
}

#[test]
fn usage_errors_exit_2_and_missing_input_exits_1() {
    let out = Command::new(BIN)
        .args(["build", "--input"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let dir = temp_dir("missing");
    let out = build_cli(&dir.join("nope"), &dir.join("x.snap"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("registrars.csv"));
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_input_same_bytes() {
    let dir = temp_dir("determinism");
    let (a, b) = (dir.join("a.snap"), dir.join("b.snap"));
    assert!(build_cli(Path::new(FIXTURE), &a).status.success());
    assert!(build_cli(Path::new(FIXTURE), &b).status.success());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());

    // Row order in the source does not matter either.
    let mut source = source::read_dir(Path::new(FIXTURE)).unwrap();
    let (forward, _) = build(&source, &BuildOptions::default()).unwrap();
    source.prices.reverse();
    source.registrars.reverse();
    source.history.reverse();
    let (backward, _) = build(&source, &BuildOptions::default()).unwrap();
    assert_eq!(forward, backward);
    assert_eq!(forward, std::fs::read(&a).unwrap());

    // --built-at changes only the header.
    let c = dir.join("c.snap");
    let out = Command::new(BIN)
        .args([
            "build",
            "--built-at",
            "2026-11-21T12:00:00Z",
            "--input",
            FIXTURE,
            "--output",
        ])
        .arg(&c)
        .output()
        .unwrap();
    assert!(out.status.success());
    let c = std::fs::read(&c).unwrap();
    assert_eq!(c[HEADER_LEN..], forward[HEADER_LEN..]);
    assert_ne!(c[..HEADER_LEN], forward[..HEADER_LEN]);
    assert_eq!(
        Snapshot::from_bytes(&c).unwrap().header().built_at_ms,
        Some(1_795_262_400_000)
    );
}

// ---------------------------------------------------------------- corrupted files

fn open_bytes(dir: &Path, name: &str, bytes: &[u8]) -> Result<Snapshot, OpenError> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    Snapshot::open(&path)
}

#[test]
fn corrupted_snapshots_are_refused_with_a_reason() {
    let dir = temp_dir("corrupt");
    let source = source::read_dir(Path::new(FIXTURE)).unwrap();
    let (good, _) = build(&source, &BuildOptions::default()).unwrap();
    assert!(open_bytes(&dir, "good.snap", &good).is_ok());

    // Empty and every truncation length of the header, then a spread through the payload.
    assert!(matches!(
        open_bytes(&dir, "empty", &[]),
        Err(OpenError::TooShort { len: 0 })
    ));
    let mut lengths: Vec<usize> = (1..HEADER_LEN + 8).collect();
    lengths.extend((HEADER_LEN..good.len()).step_by(37));
    lengths.push(good.len() - 1);
    for len in lengths {
        let err = open_bytes(&dir, "trunc", &good[..len]).expect_err("truncated file opened");
        assert!(
            matches!(err, OpenError::TooShort { .. } | OpenError::Length { .. }),
            "len {len}: {err}"
        );
    }
    // Extended by one byte.
    let mut longer = good.clone();
    longer.push(0);
    assert!(matches!(
        open_bytes(&dir, "long", &longer),
        Err(OpenError::Length { .. })
    ));

    // Wrong magic, wrong version.
    let mut bad = good.clone();
    bad[0] = b'X';
    assert!(matches!(
        open_bytes(&dir, "magic", &bad),
        Err(OpenError::Magic { .. })
    ));
    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = open_bytes(&dir, "version", &bad).unwrap_err();
    assert!(
        matches!(err, OpenError::Version { expected: FORMAT_VERSION, got } if got == FORMAT_VERSION + 1)
    );
    assert!(err.to_string().contains("rebuild"), "{err}");

    // A directory and a missing file.
    assert!(matches!(
        Snapshot::open(&dir),
        Err(OpenError::IsDirectory(_))
    ));
    assert!(matches!(
        Snapshot::open(&dir.join("nope")),
        Err(OpenError::Io { .. })
    ));

    // Hundreds of random single-bit flips anywhere in the file, prices included.
    let mut rng = synth::Rng::new(42);
    for _ in 0..400 {
        let mut flipped = good.clone();
        let at = rng.below(good.len() as u64) as usize;
        flipped[at] ^= 1 << rng.below(8);
        let result = Snapshot::from_bytes(&flipped);
        assert!(result.is_err(), "flip at byte {at} was not detected");
    }
}

#[test]
fn opening_in_steps_verifies_exactly_like_open() {
    let dir = temp_dir("steps");
    let source = source::read_dir(Path::new(FIXTURE)).unwrap();
    let (good, _) = build(&source, &BuildOptions::default()).unwrap();
    let path = dir.join("good.snap");
    std::fs::write(&path, &good).unwrap();
    for step in [1, 7, 4096, usize::MAX] {
        let mut opening = tldsnap::snapshot::Opening::start(&path).unwrap();
        let mut steps = 0;
        while !opening.step(step) {
            steps += 1;
        }
        assert!(step > good.len() || steps > 0);
        let snap = opening.finish().unwrap();
        assert_eq!(snap.header(), Snapshot::open(&path).unwrap().header());
        assert_eq!(snap.data().offer_count(), 17);
    }
    // A flipped byte anywhere is caught by the stepwise hash too.
    let mut rng = synth::Rng::new(9);
    for _ in 0..50 {
        let mut bad = good.clone();
        let at = HEADER_LEN + rng.below((good.len() - HEADER_LEN) as u64) as usize;
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        let mut opening = tldsnap::snapshot::Opening::start(&path).unwrap();
        while !opening.step(1000) {}
        assert!(opening.finish().is_err(), "flip at {at} not caught");
    }
    std::fs::write(&path, &good[..HEADER_LEN - 1]).unwrap();
    assert!(matches!(
        tldsnap::snapshot::Opening::start(&path),
        Err(OpenError::TooShort { .. })
    ));
}

#[test]
fn a_forged_payload_with_a_matching_hash_is_still_checked() {
    // A file whose hash matches but whose archive is garbage: bytecheck must refuse it.
    let mut payload = vec![0xffu8; 256];
    payload[..8].copy_from_slice(b"garbage!");
    let header = tldsnap::snapshot::Header {
        version: FORMAT_VERSION,
        payload_len: payload.len() as u64,
        content_hash: tldsnap::snapshot::content_hash(&payload),
        data_updated_ms: 0,
        built_at_ms: None,
    };
    let mut bytes = header.to_bytes().to_vec();
    bytes.extend_from_slice(&payload);
    let err = Snapshot::from_bytes(&bytes).unwrap_err();
    assert!(matches!(err, OpenError::Corrupt(_)), "{err}");
}

#[test]
fn inspect_refuses_a_bad_file_with_exit_1() {
    let dir = temp_dir("inspect-bad");
    let path = dir.join("bad.snap");
    std::fs::write(&path, b"TLDSNAP\0 but not really").unwrap();
    let out = Command::new(BIN)
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: not a tldsnap snapshot"),
        "{stderr}"
    );
    let out = Command::new(BIN).arg("inspect").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

// ---------------------------------------------------------------- golden bodies

fn check_golden(name: &str, body: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engine_golden")
        .join(format!("{name}.json"));
    let mut text = String::from_utf8(body.to_vec()).unwrap();
    // time_elapsed is real time: mask it.
    if let Some(i) = text.find("\"time_elapsed\":\"") {
        let start = i + "\"time_elapsed\":\"".len();
        let end = start + text[start..].find('"').unwrap();
        assert!(text[start..end].ends_with("ms"), "{text}");
        text.replace_range(start..end, "<ms>");
    }
    text.push('\n');
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing (UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(text, expected, "golden {name} differs");
}

#[test]
fn golden_bodies_of_every_query() {
    let snap = fixture_snapshot();
    let d = snap.data();
    let mut out = Vec::new();
    let req = |tlds: &'static [&'static str], limit, shape, tier| CheapestRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        sight: tldsnap::sight::Sight::ALL,
        tlds,
        limit,
        shape,
        tier,
    };
    query::cheapest(
        d,
        &req(
            &["com", "net", "aero", "nope", "xn--p1ai"],
            3,
            Shape::Client,
            Some("basic"),
        ),
        &mut out,
    )
    .unwrap();
    check_golden("cheapest_client", &out);
    query::cheapest(
        d,
        &req(&["com", "co.uk", "museum"], 10, Shape::Public, None),
        &mut out,
    )
    .unwrap();
    check_golden("cheapest_public", &out);
    query::cheapest(d, &req(&["de", "nope"], 10, Shape::Public, None), &mut out).unwrap();
    check_golden("cheapest_public_not_found", &out);
    let keys: &[&str] = &["golf", "alpha", "nobody"];
    query::prices(
        d,
        &PricesRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            sight: tldsnap::sight::Sight::ALL,
            tlds: &["com", "co.uk", "zz"],
            registrars: Some(keys),
            started: tldsnap::time::Stamp::now(),
        },
        &mut out,
    )
    .unwrap();
    check_golden("prices_selected", &out);
    query::prices(
        d,
        &PricesRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            sight: tldsnap::sight::Sight::ALL,
            tlds: &["com", "aero"],
            registrars: None,
            started: tldsnap::time::Stamp::now(),
        },
        &mut out,
    )
    .unwrap();
    check_golden("prices_all_sellers", &out);
    let reg = |include_prices, limit| RegistrarsRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        tld: "com",
        include_prices,
        sight: tldsnap::sight::Sight::new(true, limit),
        public_url: "https://tldsnap.dev",
    };
    query::registrars(d, &reg(true, Some(5)), &mut out).unwrap();
    check_golden("registrars_basic_with_prices", &out);
    query::registrars(d, &reg(false, None), &mut out).unwrap();
    check_golden("registrars_pro", &out);
    query::overview(
        d,
        &OverviewRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            tld: "com",
            sight: tldsnap::sight::Sight::new(true, None),
        },
        &mut out,
    )
    .unwrap();
    check_golden("overview_com", &out);
    query::overview(
        d,
        &OverviewRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            tld: "aero",
            sight: tldsnap::sight::Sight::new(true, None),
        },
        &mut out,
    )
    .unwrap();
    check_golden("overview_renewal_only", &out);
    query::history(
        d,
        &HistoryRequest {
            sight: tldsnap::sight::Sight::ALL,
            tld: "com",
            registrars: None,
            from: None,
            to: None,
        },
        &mut out,
    )
    .unwrap();
    check_golden("history_com", &out);
    let from = tldsnap::time::parse_date("2025-01-01");
    query::history(
        d,
        &HistoryRequest {
            sight: tldsnap::sight::Sight::ALL,
            tld: "de",
            registrars: Some(&["echo", "nobody"]),
            from,
            to: None,
        },
        &mut out,
    )
    .unwrap();
    check_golden("history_de_from", &out);
}

#[test]
fn nothing_known_is_an_error_not_an_empty_body() {
    let snap = fixture_snapshot();
    let mut out = Vec::new();
    let req = CheapestRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        sight: tldsnap::sight::Sight::ALL,
        tlds: &["nope", "zz"],
        limit: 5,
        shape: Shape::Client,
        tier: None,
    };
    assert_eq!(
        query::cheapest(snap.data(), &req, &mut out),
        Err(query::QueryError::UnknownTlds(vec![
            "nope".into(),
            "zz".into()
        ]))
    );
    let req = RegistrarsRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        tld: "nope",
        include_prices: false,
        sight: tldsnap::sight::Sight::ALL,
        public_url: "",
    };
    assert!(query::registrars(snap.data(), &req, &mut out).is_err());
}

// ---------------------------------------------------------------- against a recomputation

/// A synthetic source of a few hundred TLDs, with every awkward case the generator makes.
fn synthetic() -> (Source, Snapshot) {
    let dir = temp_dir("synthetic");
    let cfg = synth::Config {
        tlds: 400,
        registrars: 25,
        density: 0.5,
        seed: 7,
        history: true,
    };
    synth::write_source(&cfg, &dir).unwrap();
    let source = source::read_dir(&dir).unwrap();
    let (bytes, _) = build(&source, &BuildOptions::default()).unwrap();
    (source, Snapshot::from_bytes(&bytes).unwrap())
}

fn dollars(c: Option<u32>) -> Value {
    c.map_or(Value::Null, |c| serde_json::json!(c as f64 / 100.0))
}

#[test]
fn every_source_row_reads_back() {
    let (source, snap) = synthetic();
    let mut out = Vec::new();
    for row in &source.prices {
        let tlds = [row.tld.as_str()];
        let keys = [row.registrar.as_str()];
        let req = PricesRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            sight: tldsnap::sight::Sight::ALL,
            tlds: &tlds,
            registrars: Some(&keys),
            started: tldsnap::time::Stamp::now(),
        };
        query::prices(snap.data(), &req, &mut out).unwrap();
        let v = json(&out);
        let rec = &v["results"][&row.tld][&row.registrar];
        assert_eq!(rec["register_price"], dollars(row.register), "{row:?}");
        assert_eq!(rec["renew_price"], dollars(row.renew), "{row:?}");
        assert_eq!(rec["transfer_price"], dollars(row.transfer), "{row:?}");
        assert_eq!(
            rec["last_updated"],
            tldsnap::time::iso_millis(row.updated_ms),
            "{row:?}"
        );
    }
    // Every history row, through the history query.
    let mut by_tld: BTreeMap<&str, Vec<&source::HistoryRow>> = BTreeMap::new();
    for h in &source.history {
        by_tld.entry(&h.tld).or_default().push(h);
    }
    assert!(!by_tld.is_empty(), "the generator wrote no history");
    for (tld, rows) in by_tld {
        query::history(
            snap.data(),
            &HistoryRequest {
                sight: tldsnap::sight::Sight::ALL,
                tld,
                registrars: None,
                from: None,
                to: None,
            },
            &mut out,
        )
        .unwrap();
        let v = json(&out);
        let total: usize = v["history"]
            .as_object()
            .unwrap()
            .values()
            .map(|a| a["changes"].as_array().unwrap().len())
            .sum();
        assert_eq!(total, rows.len(), "{tld}");
        for h in rows {
            let date = tldsnap::time::date_string(h.date as i64);
            let list = v["history"][&h.registrar]["changes"].as_array().unwrap();
            let c = list
                .iter()
                .find(|c| c["date"] == date.as_str())
                .unwrap_or_else(|| panic!("{h:?}"));
            assert_eq!(c["register_price"], dollars(h.register));
            assert_eq!(c["renew_price"], dollars(h.renew));
            assert_eq!(c["transfer_price"], dollars(h.transfer));
        }
    }
}

#[test]
fn ordering_ties_and_aggregates_match_a_plain_recomputation() {
    let (source, snap) = synthetic();
    let names: BTreeMap<&str, &str> = source
        .registrars
        .iter()
        .map(|r| (r.key.as_str(), r.name.as_str()))
        .collect();
    let mut groups: BTreeMap<&str, Vec<&source::PriceRow>> = BTreeMap::new();
    for p in &source.prices {
        groups.entry(&p.tld).or_default().push(p);
    }
    let (mut ties_seen, mut renewal_only_seen) = (0, 0);
    let mut out = Vec::new();
    for (tld, rows) in &groups {
        let mut sellers: Vec<&&source::PriceRow> =
            rows.iter().filter(|r| r.register.is_some()).collect();
        renewal_only_seen += rows.len() - sellers.len();
        sellers.sort_by(|a, b| {
            (a.register, a.renew, &a.registrar).cmp(&(b.register, b.renew, &b.registrar))
        });
        ties_seen += sellers
            .windows(2)
            .filter(|w| w[0].register == w[1].register)
            .count();

        let tlds = [*tld];
        let req = CheapestRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            sight: tldsnap::sight::Sight::ALL,
            tlds: &tlds,
            limit: 100,
            shape: Shape::Public,
            tier: None,
        };
        query::cheapest(snap.data(), &req, &mut out).unwrap();
        let v = json(&out);
        let r = &v["results"][*tld];
        assert_eq!(r["registrar_count"], sellers.len(), "{tld}");
        let entries = r["cheapest_register"].as_array().unwrap();
        assert_eq!(entries.len(), sellers.len().min(100), "{tld}");
        for (i, (e, s)) in entries.iter().zip(&sellers).enumerate() {
            let (reg, ren) = (s.register.unwrap() as u64, s.renew.unwrap() as u64);
            assert_eq!(e["rank"], i + 1);
            assert_eq!(
                e["registrar_name"],
                names[s.registrar.as_str()],
                "{tld} rank {}",
                i + 1
            );
            assert_eq!(e["register_price"], dollars(s.register));
            assert_eq!(e["transfer_price"], dollars(s.transfer));
            assert_eq!(e["total_cost_1_year"], dollars(s.register));
            assert_eq!(
                e["total_cost_3_year"],
                serde_json::json!((reg + 2 * ren) as f64 / 100.0)
            );
            assert_eq!(
                e["total_cost_5_year"],
                serde_json::json!((reg + 4 * ren) as f64 / 100.0)
            );
        }
        let avg = |vals: Vec<u32>| {
            if vals.is_empty() {
                Value::Null
            } else {
                let n = vals.len() as u64;
                let sum: u64 = vals.iter().map(|v| *v as u64).sum();
                serde_json::json!(((sum + n / 2) / n) as f64 / 100.0)
            }
        };
        let a = &r["avg_prices"];
        assert_eq!(
            a["register"],
            avg(sellers.iter().filter_map(|s| s.register).collect()),
            "{tld}"
        );
        assert_eq!(
            a["renew"],
            avg(sellers.iter().filter_map(|s| s.renew).collect()),
            "{tld}"
        );
        assert_eq!(
            a["transfer"],
            avg(sellers.iter().filter_map(|s| s.transfer).collect()),
            "{tld}"
        );

        // Client shape: same order, with keys; limit cuts but the count does not change.
        let req = CheapestRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            sight: tldsnap::sight::Sight::ALL,
            tlds: &tlds,
            limit: 3,
            shape: Shape::Client,
            tier: Some("pro"),
        };
        query::cheapest(snap.data(), &req, &mut out).unwrap();
        let v = json(&out);
        let c = v["results"][*tld]["cheapest_register"].as_array().unwrap();
        assert_eq!(c.len(), sellers.len().min(3));
        for (e, s) in c.iter().zip(&sellers) {
            assert_eq!(e["registrar_key"], s.registrar.as_str());
            assert!(e.get("transfer_price").is_none());
        }
        assert_eq!(v["results"][*tld]["registrar_count"], sellers.len());

        // Overview: lowest renewal and lowest 5-year cost, ties by registrar key.
        query::overview(
            snap.data(),
            &OverviewRequest {
                fresh: tldsnap::query::Freshness::ANY_AGE,
                tld,
                sight: tldsnap::sight::Sight::new(true, None),
            },
            &mut out,
        )
        .unwrap();
        let v = json(&out);
        let low_renew = sellers.iter().min_by_key(|s| (s.renew, &s.registrar));
        let low_5y = sellers.iter().min_by_key(|s| {
            (
                s.register.unwrap() as u64 + 4 * s.renew.unwrap() as u64,
                &s.registrar,
            )
        });
        match (low_renew, low_5y) {
            (Some(lr), Some(l5)) => {
                assert_eq!(
                    v["lowest_renew"]["registrar_key"],
                    lr.registrar.as_str(),
                    "{tld}"
                );
                assert_eq!(v["lowest_renew"]["price"], dollars(lr.renew));
                assert_eq!(
                    v["lowest_5_year"]["registrar_key"],
                    l5.registrar.as_str(),
                    "{tld}"
                );
                assert_eq!(
                    v["cheapest_register"]["registrar_key"],
                    sellers[0].registrar.as_str()
                );
            }
            _ => assert!(v["lowest_renew"].is_null() && v["cheapest_register"].is_null()),
        }

        // Registrar listing in the same order, cut to 5 with a message.
        let req = RegistrarsRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            tld,
            include_prices: true,
            sight: tldsnap::sight::Sight::new(true, Some(5)),
            public_url: "https://x.test",
        };
        query::registrars(snap.data(), &req, &mut out).unwrap();
        let v = json(&out);
        let list = v["registrars"].as_array().unwrap();
        assert_eq!(list.len(), sellers.len().min(5));
        for (e, s) in list.iter().zip(&sellers) {
            assert_eq!(e["key"], s.registrar.as_str());
            assert_eq!(
                e["website_url"],
                format!("https://x.test/registrars/{}", s.registrar)
            );
            assert_eq!(e["prices"]["renew"], dollars(s.renew));
        }
        assert_eq!(v.get("message").is_some(), sellers.len() > 5, "{tld}");
    }
    assert!(
        ties_seen > 0,
        "the synthetic data has no register ties: the tie rule went untested"
    );
    assert!(
        renewal_only_seen > 0,
        "the synthetic data has no renewal-only rows"
    );
}

#[test]
fn unicode_and_second_level_names_are_found() {
    let snap = fixture_snapshot();
    let d = snap.data();
    assert!(d.has_tld("xn--p1ai"));
    assert!(d.has_tld("co.uk"));
    assert!(!d.has_tld("uk"));
    assert!(!d.has_tld("рф"), "queries take canonical names only");
    assert_eq!(d.tld_count(), 8);
    assert_eq!(d.registrar_count(), 7);
    assert_eq!(d.offer_count(), 17);
}

/// `tldsnap build --output` onto a path a server has mapped replaces the file by rename,
/// never in place: the mapped snapshot keeps its inode and its data, the path
/// holds the new one.
#[test]
fn building_over_a_served_path_leaves_the_served_map_intact() {
    let dir = temp_dir("build-over-served");
    let served = dir.join("live.snap");
    let st = Command::new(BIN)
        .args(["build", "--input", FIXTURE, "--output"])
        .arg(&served)
        .status()
        .unwrap();
    assert!(st.success());
    let old = Snapshot::open(&served).unwrap();
    let old_hash = old.header().hash_hex();
    let old_inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&served).unwrap());
    let before = old.data().tld_count();
    // A different source built onto the same path (the shipped real data).
    let st = Command::new(BIN)
        .args(["build", "--input"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/source"))
        .arg("--output")
        .arg(&served)
        .status()
        .unwrap();
    assert!(st.success());
    let new_inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&served).unwrap());
    assert_ne!(old_inode, new_inode, "the file was rewritten in place");
    // The served map still reads its own bytes, which still hash to its header.
    assert_eq!(old.data().tld_count(), before);
    let reread = Snapshot::from_bytes(&std::fs::read(&served).unwrap()).unwrap();
    assert_ne!(reread.header().hash_hex(), old_hash);
    assert!(old.data().tld("com").is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A snapshot is the process's own copy of what it verified: the file rewritten in place,
/// cut short or removed after the open changes nothing it reads. A stepped open whose
/// file is cut between steps is refused ("became shorter"), never faults.
#[test]
fn an_open_snapshot_is_its_own_copy_of_the_file() {
    let dir = temp_dir("own-copy");
    let served = dir.join("live.snap");
    let st = Command::new(BIN)
        .args(["build", "--input"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/source"))
        .arg("--output")
        .arg(&served)
        .status()
        .unwrap();
    assert!(st.success());
    let real = std::fs::read(&served).unwrap();
    let open = Snapshot::open(&served).unwrap();
    let tlds = open.data().tld_count();
    let com = |s: &Snapshot| s.data().tld("com").expect("com").sellers.to_native();
    let com_sellers = com(&open);

    // Written in place with another snapshot (a `cp`), then cut to 4,096 bytes.
    let (fixture, _) = build(
        &source::read_dir(Path::new(FIXTURE)).unwrap(),
        &BuildOptions::default(),
    )
    .unwrap();
    std::fs::write(&served, &fixture).unwrap();
    assert_eq!((open.data().tld_count(), com(&open)), (tlds, com_sellers));
    std::fs::write(&served, &real).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&served)
        .unwrap();
    f.set_len(4096).unwrap();
    assert_eq!((open.data().tld_count(), com(&open)), (tlds, com_sellers));
    std::fs::remove_file(&served).unwrap();
    assert_eq!((open.data().tld_count(), com(&open)), (tlds, com_sellers));

    // A stepped open: the file cut after the first step.
    std::fs::write(&served, &real).unwrap();
    let mut opening = tldsnap::snapshot::Opening::start(&served).unwrap();
    assert!(!opening.step(64 * 1024));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&served)
        .unwrap();
    f.set_len(4096).unwrap();
    while !opening.step(64 * 1024) {}
    match opening.finish() {
        Err(OpenError::Shrunk { expected, got, .. }) => {
            assert_eq!((expected, got), (real.len() as u64, 64 * 1024 + 64));
        }
        other => panic!("a cut file must be refused as shrunk: {other:?}"),
    }
    // Rewritten in place between steps with bytes of the same length: the hash refuses
    // the mixture.
    std::fs::write(&served, &real).unwrap();
    let mut opening = tldsnap::snapshot::Opening::start(&served).unwrap();
    assert!(!opening.step(64 * 1024));
    let mut other = real.clone();
    for b in &mut other[HEADER_LEN..] {
        *b = !*b;
    }
    std::fs::write(&served, &other).unwrap();
    while !opening.step(64 * 1024) {}
    assert!(matches!(opening.finish(), Err(OpenError::Checksum { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A price quoted in another currency: ranked in USD like any other, and the overview
/// and registrar listing show the quoted amount, currency and rate date next to it; a
/// source without the original-currency columns still reads (all USD).
#[test]
fn original_currency_is_shown_by_overview_and_listing() {
    let prices = "tld,registrar,register,renew,transfer,currency,updated_at,original_currency,original_register,original_renew,original_transfer,rate_date\n\
                  uk,alpha,12.33,12.33,0.00,USD,2026-07-08T00:00:00Z,GBP,9.17,9.17,0.00,2026-04-13\n\
                  uk,bravo,20.00,12.00,,USD,2026-08-16T00:00:00Z,,,,,\n";
    let source = source::read(REGISTRARS.as_bytes(), prices.as_bytes(), None).unwrap();
    let (bytes, _) = build(&source, &BuildOptions::default()).unwrap();
    let snap = Snapshot::from_bytes(&bytes).unwrap();
    let d = snap.data();
    let mut out = Vec::new();
    query::overview(
        d,
        &query::OverviewRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            tld: "uk",
            sight: tldsnap::sight::Sight::new(true, None),
        },
        &mut out,
    )
    .unwrap();
    check_golden("overview_original_currency", &out);
    let v = json(&out);
    assert_eq!(v["cheapest_register"]["registrar_key"], "alpha");
    assert_eq!(v["cheapest_register"]["original_price"]["price"], 9.17);
    // The registrar's own price list shows the quoted prices too.
    let mut page = Vec::new();
    query::registrar(
        d,
        &query::RegistrarRequest {
            key: "alpha",
            limit: 10,
            cursor: None,
            sight: tldsnap::sight::Sight::new(true, None),
            public_url: "https://tldsnap.test",
            snapshot: 0,
        },
        &mut page,
    )
    .unwrap();
    let p = json(&page);
    let orig = &p["prices"][0]["original_prices"];
    assert_eq!(orig["currency"], "GBP");
    assert_eq!(orig["register"], 9.17);
    assert_eq!(orig["rate_date"], "2026-04-13");
    assert_eq!(v["lowest_renew"]["registrar_key"], "bravo");
    assert!(v["lowest_renew"].get("original_price").is_none());
    assert_eq!(v["lowest_5_year"]["original_price"]["price"], 45.85);
    query::registrars(
        d,
        &RegistrarsRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            tld: "uk",
            include_prices: true,
            sight: tldsnap::sight::Sight::ALL,
            public_url: "https://tldsnap.dev",
        },
        &mut out,
    )
    .unwrap();
    check_golden("registrars_original_currency", &out);
    let v = json(&out);
    assert_eq!(
        v["registrars"][0]["original_prices"],
        serde_json::json!({"currency":"GBP","register":9.17,"renew":9.17,"transfer":0.0,"rate_date":"2026-04-13"})
    );
    assert!(v["registrars"][1].get("original_prices").is_none());
    // The same rows without the optional columns: the same USD answers.
    let plain = format!(
        "{PRICES_HEADER}uk,alpha,12.33,12.33,0.00,USD,2026-07-08T00:00:00Z\nuk,bravo,20.00,12.00,,USD,2026-08-16T00:00:00Z\n"
    );
    let source = source::read(REGISTRARS.as_bytes(), plain.as_bytes(), None).unwrap();
    assert!(source.prices.iter().all(|p| p.original.is_none()));
}

/// 2026-12-01, the day the staleness tests run "on".
const DEC_1_2026_MS: i64 = 1_796_083_200_000;

#[test]
fn a_two_year_old_price_is_stale_and_left_out_of_cheapest_unless_asked() {
    let snap = tldsnap::build::default_snapshot().unwrap();
    let d = snap.data();
    let mut out = Vec::new();
    let cheapest = |fresh: tldsnap::query::Freshness, shape, out: &mut Vec<u8>| {
        let req = CheapestRequest {
            fresh,
            tlds: &["com"],
            limit: 100,
            shape,
            tier: None,
            sight: tldsnap::sight::Sight::ALL,
        };
        tldsnap::query::cheapest(d, &req, out).unwrap();
        json(out)
    };
    let default = tldsnap::query::Freshness::new(DEC_1_2026_MS, 365, false);
    let asked = tldsnap::query::Freshness::new(DEC_1_2026_MS, 365, true);
    for shape in [Shape::Client, Shape::Public] {
        let body = cheapest(default, shape, &mut out);
        let com = &body["results"]["com"];
        let entries = com["cheapest_register"].as_array().unwrap();
        assert!(
            entries.iter().all(|e| e["registrar_name"] != "Cloudflare"),
            "{body}"
        );
        assert!(entries.iter().all(|e| e.get("stale").is_none()), "{body}");
        // Every entry carries its age, all within the limit; ranks stay 1, 2, 3...
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(e["rank"], i as u64 + 1);
            let day = &e["last_updated"].as_str().unwrap()[..10];
            assert!(day >= "2025-12-01", "{e}");
        }
        let stale_count = com["stale_count"].as_u64().unwrap();
        assert!(stale_count >= 2, "{body}");
        assert_eq!(
            entries.len() as u64 + stale_count,
            com["registrar_count"].as_u64().unwrap()
        );

        let body = cheapest(asked, shape, &mut out);
        let entries = body["results"]["com"]["cheapest_register"]
            .as_array()
            .unwrap();
        let cf = entries
            .iter()
            .find(|e| e["registrar_name"] == "Cloudflare")
            .unwrap_or_else(|| panic!("{body}"));
        assert_eq!(cf["stale"], true);
        assert_eq!(cf["last_updated"], "2024-01-07T06:15:23.000Z");
        assert_eq!(cf["register_price"], 9.77);
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(e["rank"], i as u64 + 1);
        }
    }
    // Without any age limit the answer is the stored one, byte for byte.
    let stored = cheapest(tldsnap::query::Freshness::ANY_AGE, Shape::Client, &mut out);
    let late = tldsnap::query::Freshness::new(DEC_1_2026_MS, 36_500, false);
    assert_eq!(cheapest(late, Shape::Client, &mut out), stored);

    // Prices: every record shown, the old ones marked.
    let req = PricesRequest {
        fresh: default,
        tlds: &["com"],
        registrars: Some(&["cloudflare", "route53"]),
        started: tldsnap::time::Stamp::now(),
        sight: tldsnap::sight::Sight::ALL,
    };
    tldsnap::query::prices(d, &req, &mut out).unwrap();
    let body = json(&out);
    assert_eq!(
        body["results"]["com"]["cloudflare"]["stale"], true,
        "{body}"
    );
    // Overview: the picks are fresh prices.
    let req = OverviewRequest {
        fresh: default,
        tld: "com",
        sight: tldsnap::sight::Sight::ALL,
    };
    tldsnap::query::overview(d, &req, &mut out).unwrap();
    let body = json(&out);
    for pick in ["cheapest_register", "lowest_renew", "lowest_5_year"] {
        assert!(body[pick].get("stale").is_none(), "{body}");
        assert!(
            body[pick]["last_updated"].as_str().unwrap() >= "2025-12-01",
            "{body}"
        );
    }
    assert_ne!(body["cheapest_register"]["registrar_key"], "cloudflare");
    // Listing: the stale sellers left out, counted.
    let req = RegistrarsRequest {
        fresh: default,
        tld: "com",
        include_prices: true,
        sight: tldsnap::sight::Sight::ALL,
        public_url: "https://x.test",
    };
    tldsnap::query::registrars(d, &req, &mut out).unwrap();
    let body = json(&out);
    let listed = body["registrars"].as_array().unwrap();
    assert!(listed.iter().all(|e| e["key"] != "cloudflare"), "{body}");
    assert!(body["stale_count"].as_u64().unwrap() >= 2);
}

#[test]
fn the_cli_query_marks_and_leaves_out_stale_prices() {
    let dir = temp_dir("stale_cli");
    let file = dir.join("real.tldsnap");
    let built = build_cli(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/source")),
        &file,
    );
    assert!(built.status.success(), "{built:?}");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tldsnap"))
            .args(["query", "cheapest", "--snapshot"])
            .arg(&file)
            .args(["--tlds", "com", "--limit", "100"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        json(&out.stdout)
    };
    // The real clock: Cloudflare's com price of 2024-01-07 is years old by now.
    let body = run(&[]);
    let entries = body["results"]["com"]["cheapest_register"]
        .as_array()
        .unwrap();
    assert!(
        entries.iter().all(|e| e["registrar_key"] != "cloudflare"),
        "{body}"
    );
    let body = run(&["--include-stale"]);
    let entries = body["results"]["com"]["cheapest_register"]
        .as_array()
        .unwrap();
    let cf = entries
        .iter()
        .find(|e| e["registrar_key"] == "cloudflare")
        .unwrap();
    assert_eq!(cf["stale"], true);
}

#[test]
fn a_plan_that_sees_five_sellers_sees_the_fresh_ones_of_the_stored_five() {
    // com on the real data: Cloudflare's price (2024-01-07) is the second cheapest and
    // stale on 2026-12-01. A viewer who sees 5 sellers sees the stored first five; the
    // rule leaves Cloudflare out of its rankings, marks it elsewhere, and never brings
    // in the sixth.
    let snap = tldsnap::build::default_snapshot().unwrap();
    let d = snap.data();
    let mut out = Vec::new();
    let five = tldsnap::sight::Sight::new(true, Some(5));
    let default = tldsnap::query::Freshness::new(DEC_1_2026_MS, 365, false);
    let asked = tldsnap::query::Freshness::new(DEC_1_2026_MS, 365, true);
    let keys = |entries: &Value, field: &str| -> Vec<String> {
        entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[field].as_str().unwrap().to_owned())
            .collect()
    };
    let cheapest = |fresh, sight, out: &mut Vec<u8>| {
        let req = CheapestRequest {
            fresh,
            tlds: &["com"],
            limit: 100,
            shape: Shape::Client,
            tier: None,
            sight,
        };
        tldsnap::query::cheapest(d, &req, out).unwrap();
        json(out)["results"]["com"].clone()
    };
    let all = cheapest(asked, tldsnap::sight::Sight::ALL, &mut out);
    let ranking = keys(&all["cheapest_register"], "registrar_key");
    assert_eq!(ranking[1], "cloudflare", "{all}");
    let stored_five = &ranking[..5];

    let with_stale = cheapest(asked, five, &mut out);
    assert_eq!(
        keys(&with_stale["cheapest_register"], "registrar_key"),
        stored_five
    );
    let fresh = cheapest(default, five, &mut out);
    let shown = keys(&fresh["cheapest_register"], "registrar_key");
    let want: Vec<String> = stored_five
        .iter()
        .filter(|k| *k != "cloudflare")
        .cloned()
        .collect();
    assert!(want.len() < 5);
    assert_eq!(shown, want, "{fresh}");
    for (i, e) in fresh["cheapest_register"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(e["rank"], i as u64 + 1);
    }
    // stale_count counts the stale ones among the five it sees.
    assert_eq!(fresh["stale_count"], 1, "{fresh}");

    // The listing: the same fresh ones, with the plan's message.
    let req = RegistrarsRequest {
        fresh: default,
        tld: "com",
        include_prices: false,
        sight: five,
        public_url: "https://x.test",
    };
    tldsnap::query::registrars(d, &req, &mut out).unwrap();
    let body = json(&out);
    assert_eq!(keys(&body["registrars"], "key"), want, "{body}");
    assert!(body["message"].is_string(), "{body}");

    // Prices: the records of the five, Cloudflare's marked; no sixth.
    let req = PricesRequest {
        fresh: default,
        tlds: &["com"],
        registrars: None,
        started: tldsnap::time::Stamp::now(),
        sight: five,
    };
    tldsnap::query::prices(d, &req, &mut out).unwrap();
    let body = json(&out);
    let records = body["results"]["com"].as_object().unwrap();
    let mut listed: Vec<&String> = records.keys().collect();
    let mut wanted: Vec<&String> = stored_five.iter().collect();
    listed.sort();
    wanted.sort();
    assert_eq!(listed, wanted, "{body}");
    assert_eq!(records["cloudflare"]["stale"], true);
    // Asked for by key, the sixth seller is still not shown.
    let sixth = [ranking[5].as_str()];
    let req = PricesRequest {
        registrars: Some(&sixth),
        ..req
    };
    tldsnap::query::prices(d, &req, &mut out).unwrap();
    let body = json(&out);
    assert!(body["results"]["com"].get(&ranking[5]).is_none(), "{body}");
}
