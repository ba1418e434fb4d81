//! Credits shared through Redis: exactness under concurrency, two replicas sharing one
//! budget, restart, month rollover, and Redis going away and coming back.
//!
//! Each test starts its own `redis-server` on a free loopback port in a temporary
//! directory, without persistence (with an append-only file where a test says so). Without the binary the tests print a note and pass,
//! unless `CI` is set, where a missing Redis is a failure.

mod metering_support;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use metering_support::Redis;

use tldsnap::access::clock::ManualClock;
use tldsnap::access::keys::KeysFile;
use tldsnap::access::month::month_of;
use tldsnap::access::plans::Plans;
use tldsnap::access::remote::Remote;
use tldsnap::access::{Access, AccessConfig, Denial};
use tldsnap::time::{MS_PER_DAY, days_from_civil};

fn t0() -> i64 {
    days_from_civil(2026, 11, 21) * MS_PER_DAY + 12 * 3_600_000
}

const PLANS: &str = r#"{"c500": {"credits_per_month": 500, "rate_per_second": null, "burst": null,
                                  "tlds": "all", "registrar_list_limit": null},
                        "c100": {"credits_per_month": 100, "rate_per_second": null, "burst": null,
                                 "tlds": "all", "registrar_list_limit": null},
                        "c20000": {"credits_per_month": 20000, "rate_per_second": null, "burst": null,
                                   "tlds": "all", "registrar_list_limit": null}}"#;

fn client() -> IpAddr {
    "192.0.2.1".parse().unwrap()
}

fn keys(redis: &Redis, plans: &[&str]) -> (PathBuf, Vec<String>, Vec<String>) {
    let path = redis.dir.0.join("keys.json");
    let mut f = KeysFile::default();
    let raws: Vec<String> = plans.iter().map(|p| f.add(p, "").unwrap().0).collect();
    let ids = f.keys.iter().map(|k| k.id.clone()).collect();
    f.save(&path).unwrap();
    (path, raws, ids)
}

async fn replica(redis: &Redis, keys: &std::path::Path, clock: &Arc<ManualClock>) -> Access {
    let a = Access::new(AccessConfig {
        plans: Plans::from_json(PLANS).unwrap(),
        keys_path: Some(keys.to_path_buf()),
        data_dir: None,
        usage_store: Some(redis.url()),
        clock: clock.clone(),
    })
    .await
    .unwrap();
    assert_eq!(a.usage_store_healthy(), Some(true));
    a
}

async fn spend(a: &Access, raw: &str) -> Result<Option<u64>, Denial> {
    let mut c = a.admit(Some(raw.as_bytes()), client(), true).await?;
    a.spend(&mut c).await?;
    Ok(c.headers.unwrap().credits_remaining)
}

async fn total(redis: &Redis, id: &str, now: i64) -> u64 {
    let r = Remote::new(&redis.url()).await.unwrap();
    r.totals(&[id.to_string()], month_of(now)).await.unwrap()[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_n_of_64_concurrent_callers_succeed_through_redis() {
    let Some(redis) = Redis::start("concurrent") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c100"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = Arc::new(replica(&redis, &path, &clock).await);
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let a = a.clone();
        let raw = raws[0].clone();
        tasks.push(tokio::spawn(async move {
            let mut ok = 0;
            for _ in 0..3 {
                if spend(&a, &raw).await.is_ok() {
                    ok += 1;
                }
            }
            ok
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += t.await.unwrap();
    }
    assert_eq!(ok, 100);
    assert_eq!(total(&redis, &ids[0], t0()).await, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_one_budget() {
    let Some(redis) = Redis::start("replicas") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c20000", "c500"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = Arc::new(replica(&redis, &path, &clock).await);
    let b = Arc::new(replica(&redis, &path, &clock).await);
    // Both replicas hammer the same keys at once until both see them exhausted.
    let mut tasks = Vec::new();
    for (i, r) in [a.clone(), b.clone(), a.clone(), b.clone()]
        .into_iter()
        .enumerate()
    {
        let raws = raws.clone();
        tasks.push(tokio::spawn(async move {
            let mut ok = [0u64; 2];
            for k in 0..2 {
                for _ in 0..(if k == 0 { 6_000 } else { 200 }) {
                    if spend(&r, &raws[k]).await.is_ok() {
                        ok[k] += 1;
                    }
                }
            }
            let _ = i;
            ok
        }));
    }
    let mut ok = [0u64; 2];
    for t in tasks {
        let r = t.await.unwrap();
        ok[0] += r[0];
        ok[1] += r[1];
    }
    // 24,000 attempts at a 20,000 budget; 800 at a 500 budget.
    assert!(
        ok[0] <= 20_000,
        "never more successes than credits: {}",
        ok[0]
    );
    assert!(ok[0] >= 19_800, "at most 1% fewer: {}", ok[0]);
    assert!(ok[1] <= 500 && ok[1] >= 495, "{}", ok[1]);
    // Once leases are handed back, Redis holds exactly what was served.
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    assert_eq!(total(&redis, &ids[0], t0()).await, ok[0]);
    assert_eq!(total(&redis, &ids[1], t0()).await, ok[1]);
    println!(
        "two replicas: {} of 20000 and {} of 500 served",
        ok[0], ok[1]
    );
}

#[tokio::test]
async fn a_new_replica_sees_usage_after_another_shut_down_and_months_roll_over() {
    let Some(redis) = Redis::start("restart") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c20000"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = replica(&redis, &path, &clock).await;
    for _ in 0..25 {
        spend(&a, &raws[0]).await.unwrap();
    }
    a.shutdown().await.unwrap();
    drop(a);
    assert_eq!(
        total(&redis, &ids[0], t0()).await,
        25,
        "the unspent lease was handed back"
    );
    let b = replica(&redis, &path, &clock).await;
    assert_eq!(spend(&b, &raws[0]).await.unwrap(), Some(20_000 - 26));
    clock.set(days_from_civil(2026, 12, 1) * MS_PER_DAY);
    assert_eq!(
        spend(&b, &raws[0]).await.unwrap(),
        Some(20_000 - 1),
        "a new month"
    );
}

#[tokio::test]
async fn credits_exhausted_across_replicas_until_the_month_turns() {
    let Some(redis) = Redis::start("exhaust") else {
        return;
    };
    let (path, raws, _) = keys(&redis, &["c100"]);
    let start = days_from_civil(2026, 12, 1) * MS_PER_DAY - 10_000;
    let clock = Arc::new(ManualClock::new(start));
    let a = replica(&redis, &path, &clock).await;
    let b = replica(&redis, &path, &clock).await;
    let mut ok = 0;
    for i in 0..150 {
        let r = if i % 2 == 0 { &a } else { &b };
        match spend(r, &raws[0]).await {
            Ok(_) => ok += 1,
            Err(Denial::CreditsExhausted {
                retry_after_secs,
                headers,
            }) => {
                assert_eq!(retry_after_secs, 10);
                assert_eq!(headers.credits_remaining, Some(0));
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(ok, 100);
    clock.advance(10_000);
    assert!(spend(&a, &raws[0]).await.is_ok());
    assert!(spend(&b, &raws[0]).await.is_ok());
}

#[tokio::test]
async fn redis_going_away_keeps_serving_and_the_gap_is_reconciled() {
    let Some(mut redis) = Redis::start("outage") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c500"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = replica(&redis, &path, &clock).await;
    for _ in 0..10 {
        spend(&a, &raws[0]).await.unwrap();
    }
    a.sync().await.unwrap();
    assert_eq!(total(&redis, &ids[0], t0()).await, 10);

    // Redis dies (and, started without persistence, comes back empty).
    redis.stop();
    for i in 0..15 {
        let left = spend(&a, &raws[0]).await.expect("served on local counts");
        assert_eq!(left, Some(500 - 11 - i));
    }
    assert_eq!(a.usage_store_healthy(), Some(false));
    a.sync().await.unwrap(); // still down: nothing to reconcile with, no error
    assert_eq!(a.usage_store_healthy(), Some(false));

    redis.restart();
    a.sync().await.unwrap(); // what the once-a-second task does
    assert_eq!(a.usage_store_healthy(), Some(true));
    assert_eq!(
        total(&redis, &ids[0], t0()).await,
        25,
        "the whole month is back in Redis"
    );
    let b = replica(&redis, &path, &clock).await;
    assert_eq!(spend(&b, &raws[0]).await.unwrap(), Some(500 - 26));
    assert_eq!(spend(&a, &raws[0]).await.unwrap(), Some(500 - 27));
}

#[tokio::test]
async fn an_unreachable_redis_at_start_is_not_fatal() {
    let Some(mut redis) = Redis::start("late") else {
        return;
    };
    redis.stop();
    let (path, raws, ids) = keys(&redis, &["c100"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = Access::new(AccessConfig {
        plans: Plans::from_json(PLANS).unwrap(),
        keys_path: Some(path),
        data_dir: None,
        usage_store: Some(redis.url()),
        clock: clock.clone(),
    })
    .await
    .unwrap();
    assert_eq!(a.usage_store_healthy(), Some(false));
    assert_eq!(spend(&a, &raws[0]).await.unwrap(), Some(99));
    redis.restart();
    a.sync().await.unwrap();
    assert_eq!(total(&redis, &ids[0], t0()).await, 1);
}

#[tokio::test]
async fn keys_list_reads_this_months_usage_from_redis() {
    let Some(redis) = Redis::start("list") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["pro"]);
    let a = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: Some(path.clone()),
        data_dir: None,
        usage_store: Some(redis.url()),
        clock: Arc::new(tldsnap::access::clock::SystemClock),
    })
    .await
    .unwrap();
    for _ in 0..4 {
        spend(&a, &raws[0]).await.unwrap();
    }
    a.shutdown().await.unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tldsnap"))
        .args([
            "keys",
            "list",
            "--keys",
            path.to_str().unwrap(),
            "--usage-store",
            &redis.url(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = table
        .lines()
        .find(|l| l.contains(&ids[0]))
        .expect(&table)
        .split_whitespace()
        .collect();
    assert_eq!(row, [ids[0].as_str(), "pro", "4", "10000"], "{table}");
}

#[tokio::test]
async fn a_redis_that_restarts_empty_is_refilled_by_the_live_replicas() {
    let Some(mut redis) = Redis::start("refill") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c500", "c20000"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let a = replica(&redis, &path, &clock).await;
    let b = replica(&redis, &path, &clock).await;
    for _ in 0..30 {
        spend(&a, &raws[0]).await.unwrap();
        spend(&b, &raws[1]).await.unwrap();
    }
    spend(&b, &raws[0]).await.unwrap();
    // Redis restarts without its data while nobody sends a request.
    redis.stop();
    redis.restart();
    assert_eq!(total(&redis, &ids[0], t0()).await, 0);
    a.sync().await.unwrap();
    b.sync().await.unwrap();
    assert_eq!(a.usage_store_healthy(), Some(true));
    assert_eq!(total(&redis, &ids[0], t0()).await, 31);
    // b still holds part of its enterprise-size lease: the field counts it as claimed.
    b.shutdown().await.unwrap();
    assert_eq!(total(&redis, &ids[1], t0()).await, 30);
}

#[tokio::test]
async fn a_dead_runs_lease_is_handed_back_by_the_next_run_on_its_data_dir_once_redis_answers() {
    let Some(mut redis) = Redis::start_persistent("journal") else {
        return;
    };
    let (path, raws, ids) = keys(&redis, &["c20000"]);
    let clock = Arc::new(ManualClock::new(t0()));
    let data = redis.dir.0.join("data");
    let url = redis.url();
    let on_data_dir = || {
        Access::new(AccessConfig {
            plans: Plans::from_json(PLANS).unwrap(),
            keys_path: Some(path.clone()),
            data_dir: Some(data.clone()),
            usage_store: Some(url.clone()),
            clock: clock.clone(),
        })
    };
    let a = on_data_dir().await.unwrap();
    for _ in 0..3 {
        spend(&a, &raws[0]).await.unwrap();
    }
    assert_eq!(
        total(&redis, &ids[0], t0()).await,
        20,
        "3 spent of a 20-credit lease"
    );
    // One process per data directory.
    let busy = on_data_dir().await.err().expect("refused").to_string();
    assert!(busy.contains("in use by another process"), "{busy}");

    // The run ends without a shutdown (as a killed process does): its lease is not
    // handed back, its journal stays. The directory's lock goes with it (the background
    // task may hold the state a moment longer: bounded wait).
    drop(a);
    assert_eq!(total(&redis, &ids[0], t0()).await, 20);
    redis.stop();
    let mut tries = 0;
    let b = loop {
        match on_data_dir().await {
            Ok(b) => break b,
            Err(e) if tries < 100 && e.to_string().contains("in use") => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    // Redis is down: b starts and serves on local counts; the dead run waits.
    assert_eq!(b.usage_store_healthy(), Some(false));
    for _ in 0..2 {
        spend(&b, &raws[0]).await.unwrap();
    }
    redis.restart();
    // The old claim, from the append-only file (20); or, when b's background task
    // (retrying once a second) reconnected first, part or all of its round: b's 2
    // written (22), the dead run's field set to its 3 (3), both (5). A Redis that lost
    // its data would show 0 or 2.
    let now = total(&redis, &ids[0], t0()).await;
    assert!(
        [20, 22, 3, 5].contains(&now),
        "{now} credits after the restart"
    );
    // The background task's next round: reconnect, b's spending written back, the dead
    // run's field set to what it spent.
    b.sync().await.unwrap();
    assert_eq!(total(&redis, &ids[0], t0()).await, 3 + 2);
    b.shutdown().await.unwrap();
    assert_eq!(total(&redis, &ids[0], t0()).await, 5);
    let journals = std::fs::read_dir(data.join("credits")).unwrap().count();
    assert_eq!(
        journals, 1,
        "the dead run's journal is removed once handed back"
    );
}
