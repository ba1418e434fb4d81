//! The price grid export: `tldsnap export` and `GET /api/v1/client/export` on the
//! shipped data, against `snapshots/source/prices.csv` read here with plain CSV reading.
//!
//! - the whole grid equals the price source row for row (every column of it), and the
//!   `promotion` column is true exactly where the source keeps a regular price apart;
//! - a chosen set of TLDs is exactly those TLDs' rows; another currency converts the
//!   amounts and names it, the original quotes unchanged;
//! - over HTTP: the same bytes as the command, streamed as CSV, with an `ETag` that
//!   answers `If-None-Match` with a free 304, its credits by the documented rule, and
//!   the plan, parameter and existence refusals.

mod http_support;

use std::path::Path;
use std::process::Command;

use http_support::{Options, Server, TempDir, request};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn export(args: &[&str]) -> Vec<u8> {
    let out = Command::new(BIN).arg("export").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn records(bytes: &[u8]) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes)
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect()
}

fn price_source() -> Vec<Vec<String>> {
    records(&std::fs::read(Path::new(ROOT).join("snapshots/source/prices.csv")).unwrap())
}

#[test]
fn the_export_is_the_price_source_row_for_row() {
    let source = price_source();
    let grid = records(&export(&[]));
    assert_eq!(grid.len(), source.len());
    // Every column is the price source's, every row the price source's row.
    assert_eq!(grid[0], source[0]);
    assert_eq!(grid[0].len(), 22);
    let column = |name: &str| source[0].iter().position(|c| c == name).unwrap();
    let (promotion, member) = (column("promotion"), column("member_register"));
    let (mut promotions, mut members) = (0, 0);
    for (got, want) in grid.iter().zip(&source).skip(1) {
        assert_eq!(got, want);
        promotions += usize::from(want[promotion] == "true");
        members += usize::from(!want[member].is_empty());
    }
    assert!(promotions > 300, "{promotions}");
    assert!(members > 1_500, "{members}");

    // Chosen TLDs: exactly their rows, in the same order.
    let some = records(&export(&["--tlds", "net,COM,.io,nope"]));
    let want: Vec<&Vec<String>> = source
        .iter()
        .filter(|r| ["com", "io", "net"].contains(&r[0].as_str()))
        .collect();
    assert_eq!(some.len() - 1, want.len());
    for (got, want) in some.iter().skip(1).zip(want) {
        assert_eq!(got, want);
    }

    // In euros: the amounts converted, the currency named, the quotes kept.
    let eur = records(&export(&["--tlds", "net.uk,com", "--currency", "eur"]));
    let usd = records(&export(&["--tlds", "net.uk,com"]));
    for (e, u) in eur.iter().zip(&usd).skip(1) {
        assert_eq!(e[5], "EUR");
        assert_eq!(e[..2], u[..2]);
        assert_eq!(e[6..12], u[6..12], "original quotes and dates unchanged");
        if let (Ok(a), Ok(b)) = (e[2].parse::<f64>(), u[2].parse::<f64>()) {
            assert!(a < b && a > b * 0.7, "{e:?} {u:?}");
        }
    }
    assert!(eur.iter().any(|r| r[7] == "GBP"), "net.uk is quoted in GBP");

    // A plan without the export is refused, as over HTTP.
    let out = Command::new(BIN)
        .args(["export", "--tier", "basic"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("export_not_in_plan"));
}

#[test]
fn the_http_export_streams_the_same_bytes_with_an_etag_and_its_credits() {
    let dir = TempDir::new("export");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(Path::new("/nonexistent"), &keys_path);
    opts.snapshot = None;
    opts.config.max_age_days = tldsnap::query::DEFAULT_MAX_AGE_DAYS;
    let server = Server::start(opts);
    let pro = keys["pro"].as_str();

    let r = request(server.addr, "GET", "/api/v1/client/export", Some(pro), None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    assert!(
        r.header("content-disposition")
            .is_some_and(|d| d.contains("tldsnap-prices-2026-08-22.csv"))
    );
    let command = export(&[]);
    assert!(
        r.body == command,
        "the command's bytes: {} vs {}",
        r.body.len(),
        command.len()
    );
    // 10,308 rows: one credit per started 1,000.
    assert_eq!(r.header("x-credits-cost"), Some("11"));
    let left: u64 = r.header("x-credits-remaining").unwrap().parse().unwrap();
    assert_eq!(left, 10_000 - 11);
    let tag = r.header("etag").unwrap().to_string();

    // The same export again, with its tag: 304, nothing spent.
    let r = server
        .send(format!(
            "GET /api/v1/client/export HTTP/1.1\r\nHost: t\r\nX-API-Key: {pro}\r\nIf-None-Match: {tag}\r\nConnection: close\r\n\r\n"
        ).as_bytes())
        .unwrap();
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    let r = request(
        server.addr,
        "GET",
        "/api/v1/client/export?tlds=com",
        Some(pro),
        None,
    );
    assert_eq!(r.status, 200);
    assert_ne!(r.header("etag"), Some(tag.as_str()), "another selection");
    assert_eq!(r.header("x-credits-remaining"), Some("9988"));
    assert!(r.body == export(&["--tlds", "com"]));
    let r = request(
        server.addr,
        "GET",
        "/api/v1/client/export?tlds=com&currency=JPY",
        Some(pro),
        None,
    );
    assert!(r.body == export(&["--tlds", "com", "--currency", "jpy"]));

    // Refusals: the plan, the parameters, nothing known; none costs a credit.
    request(
        server.addr,
        "GET",
        "/api/v1/client/export",
        Some(&keys["basic"]),
        None,
    )
    .assert_problem(403, "export_not_in_plan");
    request(server.addr, "GET", "/api/v1/client/export", None, None)
        .assert_problem(401, "missing_api_key");
    request(
        server.addr,
        "GET",
        "/api/v1/client/export?currency=XXX",
        Some(pro),
        None,
    )
    .assert_problem(400, "invalid_parameter");
    request(
        server.addr,
        "GET",
        "/api/v1/client/export?tlds=a..b",
        Some(pro),
        None,
    )
    .assert_problem(400, "invalid_parameter");
    request(
        server.addr,
        "GET",
        "/api/v1/client/export?tlds=nope",
        Some(pro),
        None,
    )
    .assert_problem(404, "unknown_tld");
    let r = request(
        server.addr,
        "GET",
        "/api/v1/client/export?tlds=io",
        Some(pro),
        None,
    );
    assert_eq!(
        r.header("x-credits-remaining"),
        Some("9986"),
        "com in JPY cost one"
    );
}
