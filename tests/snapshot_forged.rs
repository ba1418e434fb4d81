//! Forged snapshots: the fixture snapshot with one field of the archive rewritten and the
//! header's content hash recomputed, so that the hash passes and only the checks after
//! it (the orders and cross-references the queries rely on, the aggregates the builder
//! computed) stand between the forgery and a wrong answer. Each must be refused at open
//! with an error that says what is wrong; the unforged bytes must open. (A span is an
//! integer too: one that points elsewhere in the text than the builder's layout is
//! refused; the text's own bytes are guarded by the content hash alone.)

use std::path::Path;

use tldsnap::build::{BuildOptions, build};
use tldsnap::snapshot::{ArchivedSnapshotData, HEADER_LEN, Header, OpenError, Snapshot};

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
    header.content_hash = xxhash_rust::xxh3::xxh3_128(&forged[HEADER_LEN..]);
    forged[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    Snapshot::from_bytes(&forged)
}

/// The position of the TLD called `name`.
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
        ("a piece of text is not what its span says", |d| {
            // A span moved inside the text: in range, but cutting its piece.
            let t = &d.tlds[tld(d, "com")];
            vec![at(
                &t.public_tail.start,
                &u32_le(t.public_tail.start.to_native() + 1),
            )]
        }),
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
