//! Snapshot opening on a valid snapshot with mutations: the input is a list of
//! (offset, byte) edits to the archive of the fixture snapshot, after which the header's
//! content hash is recomputed, so that what is tested is everything open checks after
//! the hash (a forged file, not a corrupted one). A snapshot that opens must answer
//! every query without panicking, and every answer must be JSON.
//!
//! Edits skip the `text` array. This target's first runs found a forged text byte, then
//! a forged span, answered as broken JSON; both are now refused at open (the span by
//! the layout checks, `check_registrar_layout` and its TLD and catalogue parts, the
//! byte by `check_text_content`, which writes every pre-rendered fragment again and
//! compares), and `tests/snapshot_forged.rs` edits every pre-rendered byte of the
//! fixture in turn.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tldsnap::build::{BuildOptions, build};
use tldsnap::query::{self, CatalogueRequest, CatalogueSort, RegistrarRequest, Shape};
use tldsnap::sight::Sight;
use tldsnap::snapshot::{ArchivedSnapshotData, HEADER_LEN, Header, Snapshot};

/// The fixture snapshot of the test suite, built once, and where its text array lies
/// in the archive (offset, length).
fn base() -> &'static (Vec<u8>, usize, usize) {
    static BASE: OnceLock<(Vec<u8>, usize, usize)> = OnceLock::new();
    BASE.get_or_init(|| {
        let source = tldsnap::source::read_all(
            &include_bytes!("../../tests/fixtures/source/registrars.csv")[..],
            &include_bytes!("../../tests/fixtures/source/prices.csv")[..],
            Some(&include_bytes!("../../tests/fixtures/source/history.csv")[..]),
            Some(&include_bytes!("../../tests/fixtures/source/tlds.csv")[..]),
        )
        .expect("the fixture source reads");
        let bytes = build(&source, &BuildOptions::default())
            .expect("the fixture builds")
            .0;
        let snapshot = Snapshot::from_bytes(&bytes).expect("the fixture opens");
        let data = snapshot.data();
        // rkyv puts the root at the end of the archive: that locates the archive's start.
        let start = data as *const ArchivedSnapshotData as usize
            + std::mem::size_of::<ArchivedSnapshotData>()
            - (bytes.len() - HEADER_LEN);
        let text = (data.text.as_ptr() as usize - start, data.text.len());
        (bytes, text.0, text.1)
    })
}

fn json(what: &str, out: &[u8]) {
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(out) {
        panic!("{what}: not JSON ({e}): {}", String::from_utf8_lossy(out));
    }
}

/// Every query, over every name the snapshot holds.
/// The viewers every query is asked for: everything seen, no price stale; a plan that
/// sees the free TLDs' 5 cheapest sellers; each under a staleness rule that takes the
/// real data's older prices for stale, once leaving them out and once marking them.
fn answer_everything(snap: &ArchivedSnapshotData) {
    // 2026-12-01.
    const TODAY_MS: i64 = 1_796_083_200_000;
    for (sight, fresh) in [
        (Sight::ALL, query::Freshness::ANY_AGE),
        (Sight::ALL, query::Freshness::new(TODAY_MS, 365, false)),
        (
            Sight::new(false, Some(5)),
            query::Freshness::new(TODAY_MS, 365, false),
        ),
        (
            Sight::new(true, Some(5)),
            query::Freshness::new(TODAY_MS, 365, true),
        ),
    ] {
        answer_as(snap, sight, fresh);
    }
}

fn answer_as(snap: &ArchivedSnapshotData, sight: Sight, fresh: query::Freshness) {
    let mut out = Vec::new();
    let names: Vec<&str> = snap
        .catalogue
        .iter()
        .map(|e| snap.span_str(&e.name))
        .collect();
    let keys: Vec<&str> = snap
        .registrars
        .iter()
        .map(|r| snap.span_str(&r.key))
        .collect();
    for shape in [Shape::Client, Shape::Public] {
        let req = query::CheapestRequest {
            fresh,
            tlds: &names,
            limit: 100,
            shape,
            tier: Some("pro"),
            sight,
        };
        if query::cheapest(snap, &req, &mut out).is_ok() {
            json("cheapest", &out);
        }
    }
    let req = query::PricesRequest {
        fresh,
        tlds: &names,
        registrars: None,
        started: tldsnap::time::Stamp::now(),
        sight,
    };
    if query::prices(snap, &req, &mut out).is_ok() {
        json("prices", &out);
    }
    let req = query::PricesRequest {
        fresh,
        tlds: &names,
        registrars: Some(&keys),
        started: tldsnap::time::Stamp::now(),
        sight,
    };
    if query::prices(snap, &req, &mut out).is_ok() {
        json("prices of every registrar", &out);
    }
    for tld in &names {
        let req = query::RegistrarsRequest {
            fresh,
            tld,
            include_prices: true,
            sight,
            public_url: "https://t",
        };
        if query::registrars(snap, &req, &mut out).is_ok() {
            json("registrars", &out);
        }
        let req = query::OverviewRequest { fresh, tld, sight };
        if query::overview(snap, &req, &mut out).is_ok() {
            json("overview", &out);
        }
        let req = query::HistoryRequest {
            tld,
            registrars: None,
            from: None,
            to: None,
            sight,
        };
        if query::history(snap, &req, &mut out).is_ok() {
            json("history", &out);
        }
    }
    for sort in [
        CatalogueSort::Name,
        CatalogueSort::Cheapest,
        CatalogueSort::Registrars,
    ] {
        let req = CatalogueRequest {
            q: None,
            kind: None,
            sort,
            limit: query::MAX_PAGE,
            cursor: None,
            sight,
            snapshot: 0,
        };
        if query::catalogue(snap, &req, &mut out).is_ok() {
            json("catalogue", &out);
        }
    }
    query::registrars_list(snap, "https://t", &mut out);
    json("registrars list", &out);
    for key in &keys {
        let req = RegistrarRequest {
            key,
            limit: query::MAX_PAGE,
            cursor: None,
            sight,
            public_url: "https://t",
            snapshot: 0,
        };
        if query::registrar(snap, &req, &mut out).is_ok() {
            json("registrar", &out);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (base, text_start, text_len) = base();
    let mut bytes = base.clone();
    let payload_len = bytes.len() - HEADER_LEN;
    for edit in data.chunks_exact(5) {
        // Offsets count the archive without its text array.
        let mut offset = u32::from_le_bytes([edit[0], edit[1], edit[2], edit[3]]) as usize
            % (payload_len - text_len);
        if offset >= *text_start {
            offset += text_len;
        }
        bytes[HEADER_LEN + offset] = edit[4];
    }
    let mut header = Header::parse(&bytes).expect("the base header");
    header.content_hash = tldsnap::snapshot::content_hash(&bytes[HEADER_LEN..]);
    bytes[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    if let Ok(snapshot) = Snapshot::from_bytes(&bytes) {
        answer_everything(snapshot.data());
    }
});
