//! Two real `tldsnap serve` processes sharing one Redis: one budget per key across
//! replicas, never more successes than credits; and a replica that keeps serving while
//! Redis is down and reconciles when it returns.

mod metering_support;

use std::time::{Duration, Instant};

use metering_support::{CHEAPEST, Redis, Server, add_key, snapshot, used_in_redis};

const PLANS: &str = r#"{"trial": {"credits_per_month": 40, "rate_per_second": null, "burst": null,
                                  "tlds": "all", "registrar_list_limit": null}}"#;

#[test]
fn two_replicas_share_one_budget_through_redis() {
    let Some(mut redis) = Redis::start("replicas-e2e") else {
        return;
    };
    let dir = &redis.dir.0;
    let snap = snapshot(dir);
    let plans = dir.join("plans.json");
    std::fs::write(&plans, PLANS).unwrap();
    let keys = dir.join("keys.json");
    let key = add_key(&keys, "trial", &["--plans", plans.to_str().unwrap()]);
    let url = redis.url();
    let args = [
        "--snapshot".as_ref(),
        snap.as_os_str(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--plans".as_ref(),
        plans.as_os_str(),
        "--usage-store".as_ref(),
        url.as_ref(),
    ];
    let a = Server::start(&args);
    let b = Server::start(&args);

    // 60 requests alternating between the replicas, 40 credits: exactly 40 succeed.
    let mut ok = 0;
    let mut exhausted = 0;
    for i in 0..60 {
        let s = if i % 2 == 0 { &a } else { &b };
        match s.get(CHEAPEST, Some(&key)).unwrap() {
            (200, Some(_)) => ok += 1,
            (429, Some(0)) => exhausted += 1,
            other => panic!("request {i}: {other:?}"),
        }
    }
    assert_eq!((ok, exhausted), (40, 20));
    assert_eq!(used_in_redis(&keys, &plans, &url), 40);

    // Redis goes away: the replicas keep serving... (the budget is spent, so a new key)
    let key2 = add_key(&keys, "trial", &["--plans", plans.to_str().unwrap()]);
    a.signal("HUP");
    b.signal("HUP");
    let mut served = 0u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let sa = a.get(CHEAPEST, Some(&key2)).unwrap().0;
        let sb = b.get(CHEAPEST, Some(&key2)).unwrap().0;
        served += u64::from(sa == 200) + u64::from(sb == 200);
        if sa == 200 && sb == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "keys not reloaded");
        std::thread::sleep(Duration::from_millis(20));
    }
    redis.stop();
    for _ in 0..5 {
        assert_eq!(
            a.get(CHEAPEST, Some(&key2)).unwrap().0,
            200,
            "served on local counts"
        );
        assert_eq!(
            b.get(CHEAPEST, Some(&key2)).unwrap().0,
            200,
            "served on local counts"
        );
        served += 2;
    }
    // ...and when it comes back (empty), both replicas write their counts back: Redis
    // holds the whole month again, exactly.
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let out = std::process::Command::new(metering_support::BIN)
            .args([
                "keys",
                "list",
                "--keys",
                keys.to_str().unwrap(),
                "--plans",
                plans.to_str().unwrap(),
                "--usage-store",
                &url,
            ])
            .output()
            .unwrap();
        let table = String::from_utf8_lossy(&out.stdout).into_owned();
        let used: Vec<u64> = table
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().rev().nth(1)?.parse().ok())
            .collect();
        if used == [40, served] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not reconciled: {served} served to the second key, Redis says {table}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    a.terminate();
    b.terminate();
}
