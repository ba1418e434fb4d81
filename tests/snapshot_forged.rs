//! Forged snapshots: the fixture snapshot with one field of the archive rewritten and the
//! header's content hash recomputed, so that the hash passes and only the checks after
//! it (the orders and cross-references the queries rely on, the aggregates the builder
//! computed) stand between the forgery and a wrong answer. Each must be refused at open
//! with an error that says what is wrong; the unforged bytes must open. (A span is an
//! integer too: one that points elsewhere in the text than the builder's layout is
//! refused. The text's pre-rendered JSON is rendered again at open and compared, so an
//! edited byte of it is refused too: the last two tests.) Every forgery is opened twice:
//! whole, as `serve` opens at start, and in steps from a file, as a reload does
//! (`Opening`); both must come to the same verdict with the same message.

use std::path::Path;

use tldsnap::build::{BuildOptions, build};
use tldsnap::snapshot::{ArchivedSnapshotData, HEADER_LEN, Header, OpenError, Opening, Snapshot};

fn fixture() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    let source = tldsnap::source::read_dir(&dir).unwrap();
    build(&source, &BuildOptions::default()).unwrap().0
}

/// An edit: the address of a field of the opened archive and its new bytes.
type Edit = (usize, Vec<u8>);

fn at<T>(field: &T, bytes: &[u8]) -> Edit {
    (field as *const T as usize, bytes.to_vec())
}

fn u32_le(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// Opens `bytes` as [`Snapshot::from_bytes`] does, after checking that a reload's open
/// in steps (`Opening`, from a file) comes to the same verdict with the same message.
fn open_both(bytes: &[u8]) -> Result<Snapshot, OpenError> {
    let whole = Snapshot::from_bytes(bytes);
    let path = std::env::temp_dir().join(format!(
        "tldsnap-forged-{}-{:?}.snap",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, bytes).unwrap();
    let stepped = Opening::start(&path).and_then(|mut opening| {
        while !opening.step(64 * 1024) {}
        opening.finish()
    });
    std::fs::remove_file(&path).unwrap();
    match (&whole, &stepped) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "stepped open differs"),
        (a, b) => panic!(
            "whole open: {:?}; stepped open: {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
    whole
}

/// `bytes` with the edits `edits` chooses (by the address of a field of the archive
/// opened from `bytes`) and the content hash recomputed; opened.
fn forge(
    bytes: &[u8],
    edits: impl FnOnce(&ArchivedSnapshotData) -> Vec<Edit>,
) -> Result<Snapshot, OpenError> {
    let original = Snapshot::from_bytes(bytes).expect("the fixture opens");
    let data = original.data();
    // rkyv puts the root at the end of the archive: that locates the archive's start.
    let payload_len = bytes.len() - HEADER_LEN;
    let start = data as *const ArchivedSnapshotData as usize
        + std::mem::size_of::<ArchivedSnapshotData>()
        - payload_len;
    let mut forged = bytes.to_vec();
    for (addr, new) in edits(data) {
        let offset = addr - start;
        assert!(
            offset + new.len() <= payload_len,
            "an edit outside the archive"
        );
        forged[HEADER_LEN + offset..HEADER_LEN + offset + new.len()].copy_from_slice(&new);
    }
    assert_ne!(forged, bytes, "the edit changed nothing");
    let mut header = Header::parse(&forged).unwrap();
    header.content_hash = tldsnap::snapshot::content_hash(&forged[HEADER_LEN..]);
    forged[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    open_both(&forged)
}

/// The position of the TLD called `name`.
/// The snapshot of the shipped (embedded) source: large enough for several text chunks.
fn shipped() -> Vec<u8> {
    let source = tldsnap::build::embedded_source().unwrap();
    build(&source, &BuildOptions::default()).unwrap().0
}

fn tld(d: &ArchivedSnapshotData, name: &str) -> usize {
    d.tld_index(name).unwrap()
}

#[test]
fn forged_snapshots_are_refused_at_open() {
    let bytes = fixture();
    type Forgery = (&'static str, fn(&ArchivedSnapshotData) -> Vec<Edit>);
    let forgeries: Vec<Forgery> = vec![
        (
            "sellers not ordered by (register, renew, registrar key)",
            |d| {
                // `com` has sellers at different prices: swap the first two's prices.
                let t = &d.tlds[tld(d, "com")];
                let f = t.first_offer.to_native() as usize;
                let (a, b) = (&d.offers[f], &d.offers[f + 1]);
                assert_ne!(a.register, b.register);
                vec![
                    at(&a.register, &u32_le(b.register.to_native())),
                    at(&b.register, &u32_le(a.register.to_native())),
                ]
            },
        ),
        (
            "sellers are not exactly the offers with a register price",
            |d| {
                let t = &d.tlds[tld(d, "com")];
                let last = (t.first_offer.to_native() + t.sellers.to_native() - 1) as usize;
                vec![at(&d.offers[last].register, &u32_le(u32::MAX))]
            },
        ),
        ("average prices do not match the sellers", |d| {
            let t = &d.tlds[tld(d, "com")];
            vec![at(&t.avg_renew, &u32_le(t.avg_renew.to_native() + 1))]
        }),
        ("lowest renewal or 5-year cost does not match", |d| {
            let t = &d.tlds[tld(d, "com")];
            let other = if t.lowest_5y_offer == t.first_offer {
                1
            } else {
                0
            };
            vec![at(
                &t.lowest_5y_offer,
                &u32_le(t.first_offer.to_native() + other),
            )]
        }),
        ("registrar index not ordered by registrar", |d| {
            let t = &d.tlds[tld(d, "com")];
            let f = t.first_offer.to_native() as usize;
            let (a, b) = (&d.by_registrar[f], &d.by_registrar[f + 1]);
            vec![
                at(&a.registrar, &u32_le(b.registrar.to_native())),
                at(&a.offer, &u32_le(b.offer.to_native())),
                at(&b.registrar, &u32_le(a.registrar.to_native())),
                at(&b.offer, &u32_le(a.offer.to_native())),
            ]
        }),
        ("offer registrar or record out of range", |d| {
            vec![at(
                &d.offers[0].registrar,
                &u32_le(d.registrars.len() as u32),
            )]
        }),
        ("history is not ordered by (registrar, date)", |d| {
            let t = &d.tlds[tld(d, "com")];
            let c = &d.history[t.first_change.to_native() as usize + 1];
            vec![at(&c.date, &(0i32).to_le_bytes())]
        }),
        ("cheapest_in does not match the TLDs", |d| {
            let r = &d.registrars[0];
            vec![at(&r.cheapest_in, &u32_le(r.cheapest_in.to_native() + 1))]
        }),
        ("latest price date does not match its offers", |d| {
            let r = &d.registrars[0];
            vec![at(
                &r.updated_ms,
                &(r.updated_ms.to_native() - 1).to_le_bytes(),
            )]
        }),
        ("catalogue order by cheapest is not by price", |d| {
            let (a, b) = (&d.catalogue_by_cheapest[0], &d.catalogue_by_cheapest[1]);
            vec![at(a, &u32_le(b.to_native())), at(b, &u32_le(a.to_native()))]
        }),
        ("catalogue order by registrars is not by sellers", |d| {
            let n = d.catalogue_by_registrars.len();
            let (a, b) = (
                &d.catalogue_by_registrars[0],
                &d.catalogue_by_registrars[n - 1],
            );
            vec![at(a, &u32_le(b.to_native())), at(b, &u32_le(a.to_native()))]
        }),
        ("the TLD table does not find it", |d| {
            // Two occupied slots swapped: every TLD is still there once, in the wrong place.
            let full: Vec<usize> = (0..d.tld_table.len())
                .filter(|&s| d.tld_table[s] != 0)
                .collect();
            let (a, b) = (&d.tld_table[full[0]], &d.tld_table[full[1]]);
            vec![at(a, &u32_le(b.to_native())), at(b, &u32_le(a.to_native()))]
        }),
        ("span not where the builder puts it", |d| {
            // A span moved inside the text: in range, but cutting its piece.
            let t = &d.tlds[tld(d, "com")];
            vec![at(
                &t.public_tail.start,
                &u32_le(t.public_tail.start.to_native() + 1),
            )]
        }),
        (
            "the end of its cheapest entries in the text is not what",
            |d| {
                // The boundary between two pieces moved: they still tile the text, but each
                // holds part of the other.
                let t = &d.tlds[tld(d, "com")];
                let moved = u32_le(t.client_tail.end.to_native() + 1);
                vec![
                    at(&t.client_tail.end, &moved),
                    at(&t.public_tail.start, &moved),
                ]
            },
        ),
        ("span not where the builder puts it", |d| {
            // Two sellers' listing prices swapped: each a whole piece, in the wrong place.
            let t = &d.tlds[tld(d, "com")];
            let f = t.first_offer.to_native() as usize;
            let (a, b) = (&d.offers[f].listing_prices, &d.offers[f + 1].listing_prices);
            vec![
                at(&a.start, &u32_le(b.start.to_native())),
                at(&a.end, &u32_le(b.end.to_native())),
                at(&b.start, &u32_le(a.start.to_native())),
                at(&b.end, &u32_le(a.end.to_native())),
            ]
        }),
        ("a client entry is not one entry", |d| {
            let t = &d.tlds[tld(d, "com")];
            let o = &d.offers[t.first_offer.to_native() as usize];
            vec![at(&o.client_end, &u32_le(t.client_start.to_native()))]
        }),
        ("a cheapest entry in the text is not what", |d| {
            // The end between two client entries moved.
            let t = &d.tlds[tld(d, "com")];
            let o = &d.offers[t.first_offer.to_native() as usize];
            vec![at(&o.client_end, &u32_le(o.client_end.to_native() - 3))]
        }),
        ("price list not in TLD name order", |d| {
            // Two entries of a registrar's price list swapped: still its own offers.
            let r = &d.registrars[0];
            let f = r.first_listed.to_native() as usize;
            assert!(r.sells.to_native() + r.renewal_only.to_native() >= 2);
            let (a, b) = (&d.registrar_offers[f], &d.registrar_offers[f + 1]);
            vec![at(a, &u32_le(b.to_native())), at(b, &u32_le(a.to_native()))]
        }),
        (
            "registrar 0: price list holds another registrar's offer",
            |d| {
                // A price list's entry past the last offer.
                let f = d.registrars[0].first_listed.to_native() as usize;
                vec![at(&d.registrar_offers[f], &u32_le(d.offers.len() as u32))]
            },
        ),
        (
            "registrar 0: price list holds another registrar's offer",
            |d| {
                // A price list's entry pointing at an offer of another registrar.
                let f = d.registrars[0].first_listed.to_native() as usize;
                let other = (0..d.offers.len())
                    .find(|&o| d.offers[o].registrar != 0)
                    .unwrap();
                vec![at(&d.registrar_offers[f], &u32_le(other as u32))]
            },
        ),
        ("data date", |d| {
            vec![at(
                &d.data_updated_ms,
                &(d.data_updated_ms.to_native() + 1).to_le_bytes(),
            )]
        }),
    ];
    for (expected, edit) in forgeries {
        match forge(&bytes, edit) {
            Err(OpenError::Corrupt(why)) => {
                assert!(why.contains(expected), "expected {expected:?}, got {why:?}")
            }
            Ok(_) => panic!("a forgery opened: {expected}"),
            Err(other) => panic!("{expected}: refused for another reason: {other}"),
        }
    }
    // The same edit machinery with a no-op forgery (a field rewritten to its own value
    // would be refused by `forge`): the fixture itself opens.
    Snapshot::from_bytes(&bytes).expect("the fixture opens");
}

/// The fixture source with one price quoted in pounds, so the listing prices carry an
/// `original_prices` object too.
fn fixture_with_a_quoted_price() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let mut prices = String::new();
    for (i, line) in read("prices.csv").lines().enumerate() {
        prices.push_str(line);
        prices.push_str(match i {
            0 => ",original_currency,original_register,original_renew,original_transfer,rate_date",
            1 => ",GBP,7.89,10.25,7.89,2025-12-31",
            _ => ",,,,,",
        });
        prices.push('\n');
    }
    let source = tldsnap::source::read_all(
        read("registrars.csv").as_bytes(),
        prices.as_bytes(),
        Some(read("history.csv").as_bytes()),
        Some(read("tlds.csv").as_bytes()),
    )
    .unwrap();
    build(&source, &BuildOptions::default()).unwrap().0
}

/// Where the text array lies in the file: (offset, length).
fn text_in_file(bytes: &[u8]) -> (usize, usize) {
    let snapshot = Snapshot::from_bytes(bytes).unwrap();
    let data = snapshot.data();
    let start = data as *const ArchivedSnapshotData as usize
        + std::mem::size_of::<ArchivedSnapshotData>()
        - (bytes.len() - HEADER_LEN);
    (
        HEADER_LEN + (data.text.as_ptr() as usize - start),
        data.text.len(),
    )
}

/// `bytes` with the text byte at `at` (a position in the text) set to `to`, the content
/// hash recomputed, opened.
fn forge_text(bytes: &[u8], at: usize, to: u8) -> Result<Snapshot, OpenError> {
    let (text, _) = text_in_file(bytes);
    let mut forged = bytes.to_vec();
    forged[text + at] = to;
    let mut header = Header::parse(&forged).unwrap();
    header.content_hash = tldsnap::snapshot::content_hash(&forged[HEADER_LEN..]);
    forged[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    open_both(&forged)
}

#[test]
fn edited_json_text_is_refused_at_open() {
    let bytes = fixture_with_a_quoted_price();
    let snapshot = Snapshot::from_bytes(&bytes).expect("the fixture opens");
    let d = snapshot.data();
    let com = &d.tlds[tld(d, "com")];
    let first = &d.offers[com.first_offer.to_native() as usize];
    let quoted = d
        .offers
        .iter()
        .find(|o| o.original_currency.start != o.original_currency.end)
        .expect("the quoted price");
    let find = |piece: &[u8], what: &[u8]| {
        piece
            .windows(what.len())
            .position(|w| w == what)
            .unwrap_or_else(|| panic!("{:?} in {:?}", what, String::from_utf8_lossy(piece)))
    };
    let client_start = com.client_start.to_native() as usize;
    let client = d.text_range(com.client_start.to_native(), first.client_end.to_native());
    let record = d.span(&first.record);
    let listing = d.span(&quoted.listing_prices);
    let name_json = d.span(&d.registrars[1].name_json);
    // (what, position in the text, new byte, the error's words)
    let cases: Vec<(&str, usize, u8, &str)> = vec![
        (
            "a price digit of a cheapest entry: JSON still, but not the price",
            client_start + find(client, b"\"register_price\":") + 17,
            b'7',
            "a cheapest entry in the text is not what the prices render to",
        ),
        (
            "a quote inside a cheapest entry: not JSON",
            client_start + find(client, b"\"renew_price\"") + 3,
            b'"',
            "a cheapest entry",
        ),
        (
            "the last_updated date of a price record",
            first.record.start.to_native() as usize + find(record, b"T") - 1,
            b'9',
            "a price record",
        ),
        (
            "a brace of a price record",
            first.record.start.to_native() as usize + find(record, b"{"),
            b'[',
            "a price record",
        ),
        (
            "the registrar count of the client tail",
            com.client_tail.end.to_native() as usize - 2,
            b'9',
            "the end of its cheapest entries",
        ),
        (
            "an average of the public tail",
            com.public_tail.start.to_native() as usize
                + find(d.span(&com.public_tail), b"\"renew\":")
                + 8,
            b'0',
            "the end of its cheapest entries",
        ),
        (
            "an amount quoted in pounds, in the listing prices",
            quoted.listing_prices.start.to_native() as usize
                + find(listing, b"\"original_prices\"")
                + find(&listing[find(listing, b"\"original_prices\"")..], b"7.89"),
            b'8',
            "a registrar listing's prices",
        ),
        (
            "the quoted currency itself",
            quoted.original_currency.start.to_native() as usize,
            b'x',
            "a quoted currency",
        ),
        (
            "an escape in a registrar's quoted name",
            d.registrars[1].name_json.start.to_native() as usize + find(name_json, b"\\"),
            b' ',
            "registrar 1: its JSON text is not what its name and key render to",
        ),
        (
            "the quoted TLD name",
            com.key_json.start.to_native() as usize + 1,
            b'k',
            "the quoted name",
        ),
    ];
    for (what, at, to, expected) in cases {
        assert_ne!(d.text[at], to, "{what}: the edit changes nothing");
        match forge_text(&bytes, at, to) {
            Err(OpenError::Corrupt(why)) => {
                assert!(
                    why.contains(expected),
                    "{what}: expected {expected:?}, got {why:?}"
                )
            }
            Ok(_) => panic!("a forgery opened: {what}"),
            Err(other) => panic!("{what}: refused for another reason: {other}"),
        }
    }
}

/// Every byte of every pre-rendered piece, edited: each forgery is refused at open.
#[test]
fn no_byte_of_the_pre_rendered_json_can_be_edited() {
    let bytes = fixture_with_a_quoted_price();
    let snapshot = Snapshot::from_bytes(&bytes).expect("the fixture opens");
    let d = snapshot.data();
    let mut pieces: Vec<(u32, u32)> = Vec::new();
    for r in d.registrars.iter() {
        for s in [&r.name_json, &r.listing_head, &r.listing_path] {
            pieces.push((s.start.to_native(), s.end.to_native()));
        }
    }
    for t in d.tlds.iter() {
        let first = t.first_offer.to_native() as usize;
        let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
        let group = &d.offers[first..first + rows];
        let client_end = group[..sellers]
            .last()
            .map_or(t.client_start.to_native(), |o| o.client_end.to_native());
        pieces.push((t.client_start.to_native(), client_end));
        for s in [&t.key_json, &t.client_tail, &t.public_tail] {
            pieces.push((s.start.to_native(), s.end.to_native()));
        }
        for o in group {
            for s in [&o.record, &o.listing_prices, &o.original_currency] {
                pieces.push((s.start.to_native(), s.end.to_native()));
            }
        }
    }
    let mut edits = 0;
    for (start, end) in pieces {
        for at in start as usize..end as usize {
            // A byte JSON cares about, or a digit, in turn: each changes the piece.
            let to = match (at % 2, d.text[at]) {
                (0, b'"') | (1, b'5') => b'}',
                (0, _) => b'"',
                _ => b'5',
            };
            edits += 1;
            match forge_text(&bytes, at, to) {
                Err(OpenError::Corrupt(_)) => {}
                Ok(_) => panic!(
                    "text byte {at} ({:?} -> {:?}) edited and opened",
                    d.text[at] as char, to as char
                ),
                Err(other) => panic!("text byte {at}: refused for another reason: {other}"),
            }
        }
    }
    assert!(edits > 1_000, "{edits} edits");
}

/// The shipped snapshot is large enough for the text check to run in chunks on several
/// threads: an edited record in the first, a middle or the last TLD is refused, and
/// with two edits the error names the earlier TLD, however the threads ran.
#[test]
fn the_text_check_in_chunks_finds_every_edit_and_tells_the_first() {
    let bytes = shipped();
    let snapshot = Snapshot::from_bytes(&bytes).expect("the shipped snapshot opens");
    let d = snapshot.data();
    assert!(
        d.offer_count() > 3 * 2048,
        "{} offers: too few for several chunks",
        d.offer_count()
    );
    // The first digit of the first price record of the TLD at position `i`.
    let record_of = |i: usize| -> Option<(String, usize)> {
        let t = &d.tlds[i];
        (t.rows.to_native() > 0).then(|| {
            let o = &d.offers[t.first_offer.to_native() as usize];
            let name = std::str::from_utf8(d.span(&t.name)).unwrap().to_string();
            let digit = d
                .span(&o.record)
                .iter()
                .position(u8::is_ascii_digit)
                .unwrap();
            (name, o.record.start.to_native() as usize + digit)
        })
    };
    let other = |at: usize| if d.text[at] == b'7' { b'8' } else { b'7' };
    let n = d.tlds.len();
    let first = (0..n).find_map(record_of).unwrap();
    let middle = (n / 2..n).find_map(record_of).unwrap();
    let last = (0..n).rev().find_map(record_of).unwrap();
    for (name, at) in [&first, &middle, &last] {
        match forge_text(&bytes, *at, other(*at)) {
            Err(OpenError::Corrupt(e)) => assert!(e.contains("a price record"), "{name}: {e}"),
            Ok(_) => panic!("{name}: an edited record opened"),
            Err(other) => panic!("{name}: refused for another reason: {other}"),
        }
    }
    // Two edits, in the middle TLD and the last: the middle one is told, every time.
    let (text, _) = text_in_file(&bytes);
    let mut twice = bytes.clone();
    twice[text + middle.1] = other(middle.1);
    twice[text + last.1] = other(last.1);
    let mut header = Header::parse(&twice).unwrap();
    header.content_hash = tldsnap::snapshot::content_hash(&twice[HEADER_LEN..]);
    twice[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    let middle_at = d.tld_index(&middle.0).unwrap();
    for _ in 0..20 {
        match open_both(&twice) {
            Err(OpenError::Corrupt(e)) => {
                assert!(e.starts_with(&format!("TLD {middle_at}:")), "{e}")
            }
            other => panic!("two edits: {other:?}"),
        }
    }
}

/// The layout is checked in the text check's chunks (each from where its first TLD's
/// name starts) and chained across them afterwards (the unit test
/// `a_gap_before_a_chunk_is_refused` has a forgery only the chain finds): a TLD's name
/// moved onto a copy of its bytes (inside its quoted name) is refused with the message
/// a stepped open gives, whether the TLD starts a chunk or lies inside one.
#[test]
fn a_span_moved_where_a_chunk_starts_is_refused() {
    let bytes = shipped();
    let snapshot = Snapshot::from_bytes(&bytes).expect("the shipped snapshot opens");
    let d = snapshot.data();
    // The chunks' first TLDs, by the rule of `check_text_content` (2,048 offers a
    // chunk), and a TLD inside a chunk.
    let mut starts = vec![0];
    let mut held = 0;
    for (i, t) in d.tlds.iter().enumerate() {
        held += t.rows.to_native() as usize;
        if held >= 2048 && i + 1 < d.tlds.len() {
            starts.push(i + 1);
            held = 0;
        }
    }
    assert!(starts.len() > 3, "{} chunks", starts.len());
    let inside = starts[1] + 1;
    for i in [starts[1], starts[2], starts[starts.len() - 1], inside] {
        let forged = forge(&bytes, |d| {
            let t = &d.tlds[i];
            vec![
                at(&t.name.start, &u32_le(t.key_json.start.to_native() + 1)),
                at(&t.name.end, &u32_le(t.key_json.end.to_native() - 1)),
            ]
        });
        match forged {
            Err(OpenError::Corrupt(e)) => assert_eq!(
                e,
                format!("TLD {i}: span not where the builder puts it"),
                "TLD {i}"
            ),
            other => panic!("TLD {i}: {other:?}"),
        }
    }
}
