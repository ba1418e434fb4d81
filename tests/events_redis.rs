//! Several replicas, one event sequence: the swaps and their events registered once in
//! a real `redis-server` (on a free loopback port), every replica's log a mirror of
//! them (`src/events/shared.rs`, docs/EVENTS.md "Several replicas").

mod http_support;
mod metering_support;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use http_support::TempDir;
use metering_support::Redis;
use tldsnap::access::clock::{Clock, ManualClock};
use tldsnap::events::log::DEFAULT_RETENTION_MS;
use tldsnap::events::shared::{Shared, events_key};
use tldsnap::events::{EventLog, Filter};
use tldsnap::snapshot::Snapshot;
use tldsnap::store::SwapObserver;

const T0: i64 = http_support::T0_MS;

/// A replica's log in `dir/name`, mirroring the sequence in `redis`.
fn replica(dir: &TempDir, name: &str, redis: &Redis, clock: Arc<ManualClock>) -> EventLog {
    let clock = clock as Arc<dyn Clock>;
    EventLog::open(&dir.path(name), DEFAULT_RETENTION_MS, clock)
        .unwrap()
        .with_shared(Shared::connect(&redis.url()).unwrap())
        .unwrap()
}

/// Every event a log holds, as JSON.
fn events(log: &EventLog) -> Vec<String> {
    log.read(0, &Filter::default(), usize::MAX)
        .events
        .iter()
        .map(|e| e.json.to_string())
        .collect()
}

fn ids(log: &EventLog) -> Vec<u64> {
    log.read(0, &Filter::default(), usize::MAX)
        .events
        .iter()
        .map(|e| e.id)
        .collect()
}

/// A command's integer reply (or a number as text) from the test's own connection.
fn redis_int(redis: &Redis, args: &[&str]) -> i64 {
    let mut con = ::redis::Client::open(redis.url())
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    let mut cmd = ::redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(&mut con).unwrap()
}

#[test]
fn replicas_swapping_the_same_pair_make_one_copy_and_serve_one_sequence() {
    let Some(mut redis) = Redis::start("events-shared") else {
        return;
    };
    let dir = TempDir::new("events-redis");
    let a = Arc::new(Snapshot::open(&dir.fixture_snapshot("a.snap")).unwrap());
    let b = Arc::new(
        Snapshot::open(&dir.edited_snapshot("b.snap", http_support::fixture_edit)).unwrap(),
    );
    let (ha, hb) = (a.header().content_hash, b.header().content_hash);
    let clock = Arc::new(ManualClock::new(T0));
    let one = Arc::new(replica(&dir, "one", &redis, Arc::clone(&clock)));
    let two = Arc::new(replica(&dir, "two", &redis, Arc::clone(&clock)));

    // Both replicas swap a → b at the same moment: one registration, one copy.
    let barrier = Arc::new(Barrier::new(2));
    let racers: Vec<_> = [Arc::clone(&one), Arc::clone(&two)]
        .into_iter()
        .map(|log| {
            let (barrier, a, b) = (Arc::clone(&barrier), Arc::clone(&a), Arc::clone(&b));
            std::thread::spawn(move || {
                barrier.wait();
                log.before_swap(Some(&a), &b)
            })
        })
        .collect();
    for r in racers {
        r.join().unwrap().unwrap();
    }
    assert_eq!(ids(&one), [1, 2, 3, 4, 5]);
    assert_eq!(
        events(&one),
        events(&two),
        "the same bytes on both replicas"
    );
    assert_eq!(redis_int(&redis, &["XLEN", &events_key(ha, hb, 1)]), 5);
    assert_eq!(redis_int(&redis, &["XLEN", "tldsnap:swaps"]), 1);
    assert_eq!(redis_int(&redis, &["GET", "tldsnap:events:next"]), 5);
    // Swapping it again (a reload of the same file, a restarted replica) adds nothing.
    one.before_swap(Some(&a), &b).unwrap();
    assert_eq!(redis_int(&redis, &["XLEN", &events_key(ha, hb, 1)]), 5);
    assert_eq!(ids(&one).len(), 5);

    // A swap only replica one makes reaches replica two through its mirror thread.
    two.start_mirror(redis.url());
    clock.advance(60_000);
    one.before_swap(Some(&b), &a).unwrap();
    assert_eq!(ids(&one), (1..=10).collect::<Vec<_>>());
    let deadline = Instant::now() + Duration::from_secs(20);
    while two.last_id() < 10 {
        assert!(
            Instant::now() < deadline,
            "replica two did not mirror b → a"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(events(&one), events(&two));
    // Back at a, a → b is a change again (the replay rule runs in Redis): new ids, and
    // the other replica making it is as good.
    two.before_swap(Some(&a), &b).unwrap();
    assert_eq!(ids(&two), (1..=15).collect::<Vec<_>>());
    assert_eq!(redis_int(&redis, &["XLEN", &events_key(ha, hb, 11)]), 5);
    one.mirror().unwrap();
    assert_eq!(events(&one), events(&two));

    // A new replica (an empty data directory) starts with the whole sequence.
    let three = replica(&dir, "three", &redis, Arc::clone(&clock));
    assert_eq!(events(&three), events(&one));
    // A replica restarted on its own file keeps it, and the ids go on.
    drop(three);
    let three = replica(&dir, "three", &redis, Arc::clone(&clock));
    assert_eq!(events(&three), events(&one));

    // Redis gone: a swap is refused, nothing is recorded (the old snapshot serves on).
    redis.stop();
    let err = one.before_swap(Some(&b), &a).unwrap_err();
    assert!(err.contains("shared event sequence"), "{err}");
    assert_eq!(one.last_id(), 15);
}

/// Two real `tldsnap serve` replicas with `--usage-store` and their own `--data-dir`
/// watch the same snapshot file; it is replaced: each swaps, and both serve one copy of
/// the swap's events, with the same ids, from one registration in Redis.
#[test]
fn two_serve_replicas_watching_one_file_serve_the_same_events() {
    let Some(redis) = Redis::start("events-serve") else {
        return;
    };
    let dir = TempDir::new("events-redis-serve");
    let snap = dir.fixture_snapshot("served.snap");
    let edited = dir.edited_snapshot("edited.snap", http_support::fixture_edit);
    let (keys, raw) = dir.keys();
    let url = redis.url();
    let start = |data: &str| {
        let args = http_support::watching_args(&dir, &snap, &keys, data, &["--usage-store", &url]);
        http_support::Binary::start(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (one, two) = (start("one"), start("two"));
    http_support::publish(&edited, &snap);
    let pro = raw["pro"].as_str();
    let poll = |b: &http_support::Binary| b.get("/api/v1/client/events", Some(pro)).json();
    let deadline = Instant::now() + Duration::from_secs(20);
    let (a, b) = loop {
        let (a, b) = (poll(&one), poll(&two));
        if a["events"].as_array().unwrap().len() == 5 && b["events"].as_array().unwrap().len() == 5
        {
            break (a, b);
        }
        assert!(Instant::now() < deadline, "{a:#}\n{b:#}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(a, b, "one sequence on both replicas");
    let ids = http_support::event_ids(&a);
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(redis_int(&redis, &["XLEN", "tldsnap:swaps"]), 1);
    assert_eq!(redis_int(&redis, &["GET", "tldsnap:events:next"]), 5);
}
