//! End to end on the real data: `tldsnap import` of every shipped feed, `tldsnap build`,
//! then `tldsnap query ...` on the snapshot, checking facts anyone can look up in the
//! registrars' published price lists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok_json(args: &[&str]) -> Value {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

/// Imports `snapshots/feeds` and builds it; returns (source dir, snapshot file).
fn imported_snapshot() -> (PathBuf, PathBuf) {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("import-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("source");
    let snap = dir.join("real.tldsnap");
    let feeds = Path::new(ROOT).join("snapshots/feeds");
    let (code, stdout, stderr) = run(&[
        "import",
        "--feeds",
        feeds.to_str().unwrap(),
        "--output",
        source.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "import: {stderr}");
    assert!(stdout.contains("Total: 19 registrars"), "{stdout}");
    let (code, _, stderr) = run(&[
        "build",
        "--input",
        source.to_str().unwrap(),
        "--output",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "build: {stderr}");
    (source, snap)
}

fn price(v: &Value) -> Option<f64> {
    v.as_f64()
}

#[test]
fn real_feeds_import_build_and_answer() {
    let (source, snap) = imported_snapshot();
    let snap = snap.to_str().unwrap();

    // Dynadot com 10.88 / 10.88 / 10.88 and xyz 1.99 / 13.17 / 13.17.
    let body = ok_json(&[
        "query",
        "prices",
        "--snapshot",
        snap,
        "--tlds",
        "com,xyz",
        "--registrars",
        "dynadot",
    ]);
    let d = &body["results"]["com"]["dynadot"];
    assert_eq!(
        (
            price(&d["register_price"]),
            price(&d["renew_price"]),
            price(&d["transfer_price"])
        ),
        (Some(10.88), Some(10.88), Some(10.88))
    );
    assert_eq!(d["last_updated"], "2026-01-01T16:27:49.638Z");
    let d = &body["results"]["xyz"]["dynadot"];
    assert_eq!(
        (
            price(&d["register_price"]),
            price(&d["renew_price"]),
            price(&d["transfer_price"])
        ),
        (Some(1.99), Some(13.17), Some(13.17))
    );

    // Porkbun prices above 1,000 survive their thousands separator ("2,060.23").
    let body = ok_json(&[
        "query",
        "prices",
        "--snapshot",
        snap,
        "--tlds",
        "security,dealer",
        "--registrars",
        "porkbun",
    ]);
    assert_eq!(
        price(&body["results"]["security"]["porkbun"]["register_price"]),
        Some(2060.23)
    );
    assert_eq!(
        price(&body["results"]["dealer"]["porkbun"]["renew_price"]),
        Some(2060.23)
    );
    assert_eq!(
        price(&body["results"]["dealer"]["porkbun"]["register_price"]),
        Some(257.96)
    );

    // co.uk is there, sold by several registrars, with a free transfer at Porkbun.
    let body = ok_json(&[
        "query",
        "cheapest",
        "--snapshot",
        snap,
        "--tlds",
        "co.uk",
        "--limit",
        "10",
    ]);
    assert!(
        body["results"]["co.uk"]["registrar_count"]
            .as_u64()
            .unwrap()
            >= 5,
        "{body}"
    );
    let body = ok_json(&[
        "query",
        "prices",
        "--snapshot",
        snap,
        "--tlds",
        "co.uk",
        "--registrars",
        "porkbun",
    ]);
    assert_eq!(
        price(&body["results"]["co.uk"]["porkbun"]["transfer_price"]),
        Some(0.0)
    );

    // A Unicode IDN key from Dynadot is answered under its xn-- form.
    let body = ok_json(&[
        "query",
        "prices",
        "--snapshot",
        snap,
        "--tlds",
        "닷컴",
        "--registrars",
        "dynadot",
    ]);
    assert!(
        body["results"]["xn--mk1bu44c"]["dynadot"]["register_price"].is_number(),
        "{body}"
    );

    // Route 53 renewal-only TLDs are kept but never ranked.
    let body = ok_json(&[
        "query",
        "prices",
        "--snapshot",
        snap,
        "--tlds",
        "com.ar",
        "--registrars",
        "route53",
    ]);
    let r = &body["results"]["com.ar"]["route53"];
    assert!(
        r["register_price"].is_null() && r["renew_price"].is_number(),
        "{body}"
    );

    // History: Dynadot com from its 2021 versions to the 2026 list.
    let body = ok_json(&[
        "query",
        "history",
        "--snapshot",
        snap,
        "--tld",
        "com",
        "--registrars",
        "dynadot",
    ]);
    let rows = body["history"]["dynadot"]["changes"]
        .as_array()
        .expect("history rows");
    assert_eq!(
        body["history"]["dynadot"]["coverage"]["first"],
        "2021-11-22"
    );
    assert!(rows.len() >= 3, "{body}");
    assert_eq!(rows[0]["date"], "2021-11-22");
    assert_eq!(price(&rows[0]["register_price"]), Some(7.99));
    assert_eq!(rows.last().unwrap()["date"], "2026-01-01");
    assert_eq!(price(&rows.last().unwrap()["register_price"]), Some(10.88));

    // Every TLD of the source with a seller is ranked by the snapshot; at least 1,800.
    let mut reader = csv::Reader::from_path(source.join("prices.csv")).unwrap();
    let tlds: BTreeSet<String> = reader
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    let tlds: Vec<String> = tlds.into_iter().collect();
    let mut with_seller = 0;
    for batch in tlds.chunks(100) {
        let list = batch.join(",");
        let body = ok_json(&[
            "query",
            "cheapest",
            "--snapshot",
            snap,
            "--tlds",
            &list,
            "--limit",
            "1",
        ]);
        let results = body["results"].as_object().unwrap();
        assert_eq!(
            results.len(),
            batch.len(),
            "every imported TLD is known to the snapshot"
        );
        with_seller += results
            .values()
            .filter(|r| r["registrar_count"].as_u64().unwrap_or(0) > 0)
            .count();
    }
    assert!(with_seller >= 1800, "{with_seller} TLDs with a seller");

    // No Handshake name anywhere: not in the snapshot, not in the source files.
    let porkbun: Value = serde_json::from_slice(
        &std::fs::read(Path::new(ROOT).join("snapshots/feeds/porkbun/porkbun-pricing.json"))
            .unwrap(),
    )
    .unwrap();
    let handshake: Vec<String> = porkbun["pricing"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v["specialType"] == "handshake")
        .map(|(k, _)| k.clone())
        .collect();
    assert!(handshake.len() > 200, "the feed really has Handshake names");
    for batch in handshake.chunks(99) {
        let list = format!("com,{}", batch.join(","));
        let body = ok_json(&[
            "query",
            "cheapest",
            "--snapshot",
            snap,
            "--tlds",
            &list,
            "--limit",
            "1",
        ]);
        let results: Vec<&String> = body["results"].as_object().unwrap().keys().collect();
        assert_eq!(results, ["com"], "a Handshake name is in the snapshot");
        assert_eq!(
            body["meta"]["not_found"]["tlds"].as_array().unwrap().len(),
            batch.len()
        );
    }
    let names: BTreeSet<String> = handshake.into_iter().collect();
    for file in ["prices.csv", "history.csv"] {
        let mut reader = csv::Reader::from_path(source.join(file)).unwrap();
        let col = if file == "prices.csv" { 0 } else { 1 };
        for r in reader.records() {
            let r = r.unwrap();
            assert!(
                !names.contains(&r[col]),
                "Handshake name {} in {file}",
                &r[col]
            );
        }
    }
}
