//! Price-change events without the server: the diff of two snapshots (exact cases on the
//! fixture, and a randomized comparison with a map-based oracle on synthetic sources),
//! the durable log (torn tails at every cut point, a real `kill -9` of a writing child
//! process, replays, retention) and the store's swap hook.

#[path = "../tools/synth/gen.rs"]
mod synth;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tldsnap::access::clock::ManualClock;
use tldsnap::build::{BuildOptions, build};
use tldsnap::events::log::{DEFAULT_RETENTION_MS, FILE_NAME};
use tldsnap::events::{Change, EventLog, Filter, Kind, Prices, diff};
use tldsnap::files::write_atomic;
use tldsnap::snapshot::Snapshot;
use tldsnap::snapshot::schema::NONE;
use tldsnap::source::{self, PriceRow, RegistrarRow, Source};
use tldsnap::store::{ReloadError, Store};

const T0_MS: i64 = 1_795_262_400_000;
const DAY_MS: i64 = 86_400_000;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).unwrap();
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p =
            std::env::temp_dir().join(format!("tldsnap-events-{tag}-{}-{hex}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture() -> Source {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    source::read_dir(&dir).unwrap()
}

fn snapshot(source: &Source) -> Snapshot {
    let (bytes, _) = build(source, &BuildOptions::default()).unwrap();
    Snapshot::from_bytes(&bytes).unwrap()
}

fn row<'a>(s: &'a mut Source, tld: &str, registrar: &str) -> &'a mut PriceRow {
    s.prices
        .iter_mut()
        .find(|r| r.tld == tld && r.registrar == registrar)
        .unwrap()
}

fn prices(register: u32, renew: u32, transfer: u32) -> Option<Prices> {
    Some(Prices {
        register,
        renew,
        transfer,
    })
}

fn changes(old: &Snapshot, new: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    diff(old.data(), new.data(), &mut out);
    out.iter().map(|c| format!("{c:?}")).collect()
}

#[test]
fn the_diff_of_known_edits_is_exactly_those_events_in_order() {
    let before = fixture();
    let mut after = before.clone();
    // A registrar that sorts first shifts every other registrar's position by one: the
    // merge compares keys, so this alone must produce no event.
    after.registrars.push(RegistrarRow {
        key: "aardvark".into(),
        name: "Aardvark".into(),
        homepage: String::new(),
    });
    row(&mut after, "com", "delta").register = Some(1088); // changed; delta was cheapest
    row(&mut after, "com", "alpha").updated_ms += 1; // a new date alone is no change
    after
        .prices
        .retain(|r| !(r.tld == "net" && r.registrar == "bravo")); // removed
    after.prices.push(PriceRow {
        tld: "de".into(),
        registrar: "aardvark".into(),
        register: Some(500),
        renew: Some(700),
        transfer: None,
        updated_ms: T0_MS,
        original: None,
        terms: Default::default(),
    }); // added, and the new cheapest of .de
    after.prices.retain(|r| r.tld != "io"); // a whole TLD gone
    let (old, new) = (snapshot(&before), snapshot(&after));

    let mut got = Vec::new();
    diff(old.data(), new.data(), &mut got);
    let expected = vec![
        Change {
            kind: Kind::PriceChanged,
            tld: "com",
            registrar: Some("delta"),
            previous_registrar: None,
            old: prices(888, 1500, 888),
            new: prices(1088, 1500, 888),
        },
        Change {
            kind: Kind::RankingChanged,
            tld: "com",
            registrar: Some("charlie"),
            previous_registrar: Some("delta"),
            old: prices(888, 1500, 888),
            new: prices(999, 1100, NONE),
        },
        Change {
            kind: Kind::OfferAdded,
            tld: "de",
            registrar: Some("aardvark"),
            previous_registrar: None,
            old: None,
            new: prices(500, 700, NONE),
        },
        Change {
            kind: Kind::RankingChanged,
            tld: "de",
            registrar: Some("aardvark"),
            previous_registrar: Some("echo"),
            old: prices(600, 600, 600),
            new: prices(500, 700, NONE),
        },
        Change {
            kind: Kind::OfferRemoved,
            tld: "io",
            registrar: Some("charlie"),
            previous_registrar: None,
            old: prices(3500, 4500, 4500),
            new: None,
        },
        Change {
            kind: Kind::RankingChanged,
            tld: "io",
            registrar: None,
            previous_registrar: Some("charlie"),
            old: prices(3500, 4500, 4500),
            new: None,
        },
        Change {
            kind: Kind::OfferRemoved,
            tld: "net",
            registrar: Some("bravo"),
            previous_registrar: None,
            old: prices(1234, 1234, 1234),
            new: None,
        },
    ];
    assert_eq!(got, expected);

    // The other way round: every addition is a removal and the rankings swap sides.
    let mut back = Vec::new();
    diff(new.data(), old.data(), &mut back);
    let count = |v: &[Change<'_>], k| v.iter().filter(|c| c.kind == k).count();
    assert_eq!(back.len(), got.len());
    assert_eq!(
        count(&back, Kind::OfferAdded),
        count(&got, Kind::OfferRemoved)
    );
    // Nothing changes between a snapshot and itself.
    assert!(changes(&old, &old).is_empty());
}

/// A small deterministic PRNG for the edits (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Per TLD, per registrar: (register, renew, transfer).
type Group = BTreeMap<String, (Option<u32>, Option<u32>, Option<u32>)>;
type Offers = BTreeMap<String, Group>;

fn offers(s: &Source) -> Offers {
    let mut m = Offers::new();
    for r in &s.prices {
        m.entry(r.tld.clone())
            .or_default()
            .insert(r.registrar.clone(), (r.register, r.renew, r.transfer));
    }
    m
}

/// The cheapest seller by (register, renew, key), as the builder ranks them.
fn cheapest(group: Option<&Group>) -> Option<String> {
    group?
        .iter()
        .filter_map(|(k, p)| Some((p.0?, p.1, k.clone())))
        .min()
        .map(|c| c.2)
}

/// What the diff must say, computed the slow, obvious way from the two sources.
fn oracle(a: &Source, b: &Source) -> Vec<(Kind, String, Option<String>)> {
    let (oa, ob) = (offers(a), offers(b));
    let mut tlds: Vec<&String> = oa.keys().chain(ob.keys()).collect();
    tlds.sort();
    tlds.dedup();
    let mut out = Vec::new();
    for t in tlds {
        let (ga, gb) = (oa.get(t), ob.get(t));
        let mut regs: Vec<&String> = ga
            .into_iter()
            .flat_map(|g| g.keys())
            .chain(gb.into_iter().flat_map(|g| g.keys()))
            .collect();
        regs.sort();
        regs.dedup();
        for r in regs {
            let kind = match (ga.and_then(|g| g.get(r)), gb.and_then(|g| g.get(r))) {
                (Some(x), Some(y)) if x != y => Kind::PriceChanged,
                (Some(_), None) => Kind::OfferRemoved,
                (None, Some(_)) => Kind::OfferAdded,
                _ => continue,
            };
            out.push((kind, t.clone(), Some(r.clone())));
        }
        let (ca, cb) = (cheapest(ga), cheapest(gb));
        if ca != cb {
            out.push((Kind::RankingChanged, t.clone(), cb));
        }
    }
    out
}

fn synthetic(seed: u64) -> Source {
    let cfg = synth::Config {
        tlds: 400,
        registrars: 15,
        density: 0.5,
        seed,
        history: false,
    };
    let (mut r, mut p) = (Vec::new(), Vec::new());
    synth::generate(&cfg, &mut r, &mut p, std::io::sink()).unwrap();
    source::read(&r[..], &p[..], None).unwrap()
}

#[test]
fn the_diff_agrees_with_a_map_based_oracle_on_random_edits() {
    for seed in 1..=6u64 {
        let a = synthetic(seed);
        let mut b = a.clone();
        let mut rng = Rng(seed);
        // Change, remove and add rows, retire a registrar, add registrars that shift
        // positions, and add whole TLDs.
        for r in b.prices.iter_mut() {
            match rng.below(40) {
                0 => r.register = r.register.map(|c| c + 1 + rng.below(500) as u32),
                1 => r.renew = r.renew.map(|c| c.saturating_sub(1 + rng.below(300) as u32)),
                2 => r.transfer = r.transfer.map_or(Some(999), |_| None),
                _ => {}
            }
        }
        b.prices.retain(|_| rng.below(50) != 0);
        let gone = b.registrars[rng.below(b.registrars.len() as u64) as usize]
            .key
            .clone();
        b.prices.retain(|r| r.registrar != gone);
        b.registrars.retain(|r| r.key != gone);
        for key in ["0first", "mmiddle", "zzlast"] {
            b.registrars.push(RegistrarRow {
                key: key.into(),
                name: key.into(),
                homepage: String::new(),
            });
        }
        let tlds: Vec<String> = offers(&a).into_keys().collect();
        for i in 0..200 {
            let tld = if i % 20 == 0 {
                format!("new{i}")
            } else {
                tlds[rng.below(tlds.len() as u64) as usize].clone()
            };
            let registrar = ["0first", "mmiddle", "zzlast"][i % 3].to_owned();
            if b.prices
                .iter()
                .any(|r| r.tld == tld && r.registrar == registrar)
            {
                continue;
            }
            let register = 100 + rng.below(5000) as u32;
            b.prices.push(PriceRow {
                tld,
                registrar,
                register: Some(register),
                renew: Some(register + 100),
                transfer: None,
                updated_ms: T0_MS,
                original: None,
                terms: Default::default(),
            });
        }
        let (sa, sb) = (snapshot(&a), snapshot(&b));
        let mut got = Vec::new();
        diff(sa.data(), sb.data(), &mut got);
        let got: Vec<(Kind, String, Option<String>)> = got
            .iter()
            .map(|c| (c.kind, c.tld.to_owned(), c.registrar.map(str::to_owned)))
            .collect();
        let want = oracle(&a, &b);
        assert!(want.len() > 100, "seed {seed}: the edits changed little");
        assert_eq!(got, want, "seed {seed}");
    }
}

/// A swap's worth of synthetic changes for log tests: `n` price changes on TLD `tld`.
fn fake_changes(tld: &str, n: usize) -> Vec<Change<'_>> {
    const REGS: [&str; 4] = ["alpha", "bravo", "charlie", "delta"];
    (0..n)
        .map(|i| Change {
            kind: if i % 5 == 4 {
                Kind::RankingChanged
            } else {
                Kind::PriceChanged
            },
            tld,
            registrar: Some(REGS[i % 4]),
            previous_registrar: (i % 5 == 4).then_some(REGS[(i + 1) % 4]),
            old: prices(1000 + i as u32, 1200, NONE),
            new: prices(1100 + i as u32, 1200, 900),
        })
        .collect()
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(T0_MS))
}

fn all(log: &EventLog) -> Vec<(u64, String)> {
    log.read(0, &Filter::default(), usize::MAX)
        .events
        .iter()
        .map(|e| (e.id, e.json.to_string()))
        .collect()
}

#[test]
fn the_log_survives_reopening_and_ids_keep_increasing() {
    let dir = TempDir::new("reopen");
    let clock = clock();
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    assert_eq!(log.last_id(), 0);
    assert_eq!(log.append(1, 2, &fake_changes("com", 5)).unwrap(), 1..6);
    clock.advance(1000);
    assert_eq!(log.append(2, 3, &fake_changes("net", 2)).unwrap(), 6..8);
    let before = all(&log);
    assert_eq!(before.len(), 7);
    let v: serde_json::Value = serde_json::from_str(&before[5].1).unwrap();
    assert_eq!(v["id"], 6);
    assert_eq!(v["type"], "price.changed");
    assert_eq!(v["timestamp"], "2026-11-21T12:00:01.000Z");
    assert_eq!(v["snapshot"]["from"], format!("{:032x}", 2));
    assert_eq!(v["data"]["tld"], "net");
    drop(log);

    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    assert_eq!(log.dropped_on_open(), 0);
    assert_eq!(all(&log), before);
    assert_eq!(log.append(3, 4, &fake_changes("org", 1)).unwrap(), 8..9);

    // Filters and pages.
    let f = Filter {
        kinds: Kind::RankingChanged.bit(),
        ..Filter::default()
    };
    let page = log.read(0, &f, 10);
    assert_eq!(
        page.events.iter().map(|e| e.id).collect::<Vec<_>>(),
        [5],
        "only the fifth change of com is a ranking change"
    );
    assert_eq!(
        page.cursor, 8,
        "the cursor moves past what the filter skipped"
    );
    // com: alpha, bravo, charlie, delta, then the ranking change alpha (was bravo);
    // net: alpha, bravo. Only id 3 has charlie.
    let f = Filter {
        registrars: vec!["charlie".into()],
        tlds: vec!["com".into(), "net".into()],
        ..Filter::default()
    };
    assert_eq!(
        log.read(0, &f, 10)
            .events
            .iter()
            .map(|e| e.id)
            .collect::<Vec<_>>(),
        [3]
    );
    // A ranking change matches its previous cheapest too.
    let f = Filter {
        registrars: vec!["bravo".into()],
        tlds: vec!["com".into()],
        ..Filter::default()
    };
    assert_eq!(
        log.read(0, &f, 10)
            .events
            .iter()
            .map(|e| e.id)
            .collect::<Vec<_>>(),
        [2, 5]
    );
    let page = log.read(1, &Filter::default(), 2);
    assert_eq!(
        (
            page.events.iter().map(|e| e.id).collect::<Vec<_>>(),
            page.cursor,
            page.more
        ),
        (vec![2, 3], 3, true)
    );
}

#[test]
fn a_torn_last_record_is_dropped_at_every_cut_point_and_never_parsed() {
    let dir = TempDir::new("torn");
    let clock = clock();
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    log.append(1, 2, &fake_changes("com", 4)).unwrap();
    let path = log.path().to_path_buf();
    let good = std::fs::read(&path).unwrap().len();
    log.append(2, 3, &fake_changes("net", 3)).unwrap();
    let first_events = all(&log)[..4].to_vec();
    drop(log);
    let full = std::fs::read(&path).unwrap();

    let check = |bytes: &[u8], what: &str| {
        let d = TempDir::new("torn-cut");
        std::fs::write(d.0.join(FILE_NAME), bytes).unwrap();
        let log = EventLog::open(&d.0, DEFAULT_RETENTION_MS, clock.clone())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(all(&log), first_events, "{what}");
        assert_eq!(log.last_id(), 4, "{what}");
        assert_eq!(log.dropped_on_open() as usize, bytes.len() - good, "{what}");
        assert_eq!(
            std::fs::metadata(log.path()).unwrap().len() as usize,
            good,
            "{what}: the file is cut back to the last whole record"
        );
        // The next swap is recorded after the good records and survives a reopen.
        assert_eq!(log.append(2, 3, &fake_changes("org", 2)).unwrap(), 5..7);
        drop(log);
        let log = EventLog::open(&d.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
        assert_eq!((log.last_id(), log.dropped_on_open()), (6, 0), "{what}");
    };
    // Every prefix of the second record: a write cut short.
    for cut in good..full.len() {
        check(&full[..cut], &format!("cut at {cut}"));
    }
    // Whole length, but a byte of the record changed (a write torn inside a page): the
    // checksum catches it, even in the length field.
    for at in [good, good + 5, good + 12, full.len() - 1] {
        let mut bad = full.clone();
        bad[at] ^= 0x40;
        check(&bad, &format!("flipped byte {at}"));
    }
    // Zeros after the end (a file extended by the file system, not by us).
    let mut zeros = full[..good].to_vec();
    zeros.extend_from_slice(&[0u8; 100]);
    check(&zeros, "trailing zeros");
}

#[test]
fn a_log_that_is_not_torn_but_wrong_is_refused() {
    let dir = TempDir::new("corrupt");
    std::fs::write(dir.0.join(FILE_NAME), b"not an event log at all, no").unwrap();
    let err = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock()).unwrap_err();
    assert!(err.to_string().contains("not a tldsnap event log"), "{err}");
}

#[test]
fn replaying_a_swap_records_nothing_but_returning_to_an_old_snapshot_does() {
    let dir = TempDir::new("replay");
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock()).unwrap();
    let (a, b, c) = (0xa, 0xb, 0xc);
    assert_eq!(log.append(a, b, &fake_changes("com", 2)).unwrap(), 1..3);
    assert_eq!(log.append(a, b, &fake_changes("com", 2)).unwrap(), 3..3);
    assert!(log.is_replay(a, b));
    drop(log);
    // Across a restart too.
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock()).unwrap();
    assert!(log.is_replay(a, b));
    assert_eq!(log.append(a, b, &fake_changes("com", 2)).unwrap(), 3..3);
    // B → A, then A → B again: prices really moved back and forth.
    assert_eq!(log.append(b, a, &fake_changes("com", 2)).unwrap(), 3..5);
    assert!(!log.is_replay(a, b));
    assert_eq!(log.append(a, b, &fake_changes("com", 2)).unwrap(), 5..7);
    assert_eq!(log.append(b, c, &fake_changes("net", 1)).unwrap(), 7..8);
    assert_eq!(log.append(b, c, &fake_changes("net", 1)).unwrap(), 8..8);
    assert_eq!(log.swaps().len(), 4);
}

#[test]
fn retention_compacts_old_swaps_atomically_and_ids_never_repeat() {
    let dir = TempDir::new("retention");
    let clock = clock();
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    log.append(1, 2, &fake_changes("com", 3)).unwrap();
    clock.advance(10 * DAY_MS);
    log.append(2, 3, &fake_changes("net", 2)).unwrap();
    clock.advance(85 * DAY_MS); // the first swap is 95 days old, the second 85
    log.append(3, 4, &fake_changes("org", 1)).unwrap();
    assert_eq!(
        all(&log).iter().map(|e| e.0).collect::<Vec<_>>(),
        [4, 5, 6],
        "the 95-day-old swap is gone"
    );
    assert_eq!(log.first_id(), Some(4));
    drop(log);
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    assert_eq!(all(&log).iter().map(|e| e.0).collect::<Vec<_>>(), [4, 5, 6]);
    drop(log);
    // Everything expired while the server was down: the file is rewritten empty, and
    // ids continue where they were.
    clock.advance(200 * DAY_MS);
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    assert!(all(&log).is_empty());
    assert_eq!(log.last_id(), 6);
    drop(log);
    let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock.clone()).unwrap();
    assert_eq!(log.last_id(), 6);
    assert_eq!(log.append(4, 5, &fake_changes("de", 1)).unwrap(), 7..8);
    let names: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [FILE_NAME], "no temporary file is left behind");
}

const CHILD_ENV: &str = "TLDSNAP_EVENTS_KILL9_CHILD_DIR";

/// The child of `kill_9_while_appending_loses_no_acknowledged_swap`: appends swaps in
/// a loop and prints each one's last id once `append` returned (synced).
#[test]
#[ignore = "run as a child process by kill_9_while_appending_loses_no_acknowledged_swap"]
fn kill9_child_appends_forever() {
    use std::io::Write;
    let dir = std::env::var_os(CHILD_ENV).expect("started by the kill -9 test, with its directory");
    let log = EventLog::open(Path::new(&dir), DEFAULT_RETENTION_MS, clock()).unwrap();
    let mut out = std::io::stdout().lock();
    // Bounded: the parent kills it long before.
    for i in 0..1_000_000u128 {
        let tld = format!("t{i}");
        let ids = log.append(i, i + 1, &fake_changes(&tld, 40)).unwrap();
        writeln!(out, "durable {}", ids.end - 1).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_9_while_appending_loses_no_acknowledged_swap() {
    let dir = TempDir::new("kill9");
    for round in 0..3 {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "kill9_child_appends_forever",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &dir.0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut acknowledged = 0u64;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Let it append a while (a different number of swaps each round), then SIGKILL
        // it in the middle of whatever it is doing.
        let mut seen = 0;
        while seen < 50 + round * 37 {
            let line = lines.next().expect("the child reports").unwrap();
            if let Some(id) = line.strip_prefix("durable ") {
                acknowledged = id.parse().unwrap();
                seen += 1;
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Acknowledgements printed before the kill but not read yet count too.
        for line in lines.map_while(Result::ok) {
            if let Some(id) = line.strip_prefix("durable ") {
                acknowledged = id.parse().unwrap();
            }
        }

        let log = EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock()).unwrap();
        let events = all(&log);
        assert!(
            log.last_id() >= acknowledged,
            "round {round}: acknowledged up to {acknowledged}, log ends at {}",
            log.last_id()
        );
        assert_eq!(events.len() as u64, log.last_id(), "round {round}");
        for (k, (id, json)) in events.iter().enumerate() {
            assert_eq!(*id, k as u64 + 1, "round {round}: ids are consecutive");
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(v["id"], *id);
        }
        assert_eq!(
            log.swaps().iter().map(|s| s.count).sum::<u32>() as u64,
            log.last_id()
        );
        assert!(
            log.swaps().iter().all(|s| s.count == 40),
            "round {round}: a swap is whole or absent"
        );
        println!(
            "round {round}: {} events, {} torn bytes dropped",
            log.last_id(),
            log.dropped_on_open()
        );
    }
}

/// An observer that refuses every swap, for the store's side of the hook.
struct Refuse;

impl tldsnap::store::SwapObserver for Refuse {
    fn before_swap(&self, _: Option<&Snapshot>, _: &Snapshot) -> Result<(), String> {
        Err("no".into())
    }
}

#[test]
fn the_store_records_events_before_it_swaps_and_a_refusal_keeps_the_old_snapshot() {
    let dir = TempDir::new("store");
    let path = dir.0.join("s.snap");
    let before = fixture();
    let mut after = before.clone();
    row(&mut after, "net", "alpha").renew = Some(1250);
    let bytes = |s: &Source| build(s, &BuildOptions::default()).unwrap().0;
    write_atomic(&path, &bytes(&before)).unwrap();
    let log = Arc::new(EventLog::open(&dir.0, DEFAULT_RETENTION_MS, clock()).unwrap());
    let store = Store::open(path.clone())
        .unwrap()
        .observed(Arc::clone(&log) as Arc<dyn tldsnap::store::SwapObserver>);
    assert_eq!(log.last_id(), 0, "the first snapshot is no change");

    write_atomic(&path, &bytes(&after)).unwrap();
    let loaded = store.reload().unwrap();
    let events = all(&log);
    assert_eq!(events.len(), 1);
    let v: serde_json::Value = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(v["type"], "price.changed");
    assert_eq!(v["data"]["registrar"], "alpha");
    assert_eq!(v["data"]["new"]["renew"], 12.5);
    assert_eq!(v["snapshot"]["to"], loaded.snapshot.header().hash_hex());
    // Reloading the same file again is no swap of content: nothing more.
    store.reload().unwrap();
    assert_eq!(log.last_id(), 1);
    // Back and forth: each direction once.
    write_atomic(&path, &bytes(&before)).unwrap();
    store.reload().unwrap();
    assert_eq!(log.last_id(), 2);

    // A refusing observer: the swap does not happen, the old snapshot keeps serving.
    let store = Store::open(path.clone())
        .unwrap()
        .observed(Arc::new(Refuse));
    let served = store.load().unwrap();
    write_atomic(&path, &bytes(&after)).unwrap();
    let err = store.reload().unwrap_err();
    assert!(matches!(err, ReloadError::Refused(_)), "{err}");
    assert!(Arc::ptr_eq(&store.load().unwrap(), &served));
    assert_eq!((store.reload_successes(), store.reload_failures()), (0, 1));
}
