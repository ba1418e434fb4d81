//! Two real `tldsnap serve` processes sharing one Redis: one budget per key across
//! replicas, never more successes than credits; and a replica that keeps serving while
//! Redis is down and reconciles when it returns.

mod metering_support;

use std::time::{Duration, Instant};

use metering_support::{CHEAPEST, Redis, Server, add_key, snapshot, used_in_redis};
use tldsnap::access::remote::Remote;
use tldsnap::events::shared::Shared;

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

/// A Redis that requires a password: credits, the event sequence and `keys list` use it
/// (AUTH), and no log line or error of the library or the binary ever shows it: the
/// address appears as `redis://default:***@HOST:PORT`.
#[test]
fn a_redis_password_is_used_and_never_shown() {
    const PASSWORD: &str = "s3cr3t-Pw";
    let Some(mut redis) = Redis::start_with_password("auth", PASSWORD) else {
        return;
    };
    let port = redis.port;
    let url = format!("redis://default:{PASSWORD}@127.0.0.1:{port}");
    let wrong = format!("redis://default:not-{PASSWORD}@127.0.0.1:{port}");
    let shown = format!("redis://default:***@127.0.0.1:{port}");
    let hidden = |text: &str| {
        assert!(!text.contains(PASSWORD), "the password is shown: {text}");
        assert!(text.contains(&shown), "the address is not named: {text}");
    };

    // The library: the usage store and the event sequence authenticate; a wrong
    // password is refused and the errors name the address without it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let r = Remote::new(&url).await.unwrap();
        assert!(r.healthy());
        assert_eq!(r.totals(&["nobody".into()], 0).await.unwrap(), [0]);
        let r = Remote::new(&wrong).await.unwrap();
        assert!(!r.healthy());
        hidden(
            &r.totals(&["nobody".into()], 0)
                .await
                .unwrap_err()
                .to_string(),
        );
        hidden(&format!("{r:?}"));
    });
    let shared = Shared::connect(&url).unwrap();
    assert_eq!(shared.url(), shown);
    hidden(&format!("{shared:?}"));
    Shared::connect(&wrong).unwrap_err();

    // The binary.
    let dir = &redis.dir.0;
    let snap = snapshot(dir);
    let plans = dir.join("plans.json");
    std::fs::write(&plans, PLANS).unwrap();
    let keys = dir.join("keys.json");
    let key = add_key(&keys, "trial", &["--plans", plans.to_str().unwrap()]);
    let data = dir.join("data");
    let args = |store: &str| -> Vec<std::ffi::OsString> {
        vec![
            "--snapshot".into(),
            snap.clone().into(),
            "--keys".into(),
            keys.clone().into(),
            "--plans".into(),
            plans.clone().into(),
            "--data-dir".into(),
            data.clone().into(),
            "--usage-store".into(),
            store.into(),
        ]
    };
    // A wrong password with --data-dir: the shared event sequence cannot start, and
    // serve says so without the password.
    let out = std::process::Command::new(metering_support::BIN)
        .arg("serve")
        .arg("--addr")
        .arg("127.0.0.1:0")
        .args(args(&wrong))
        .output()
        .unwrap();
    assert!(!out.status.success());
    hidden(&String::from_utf8_lossy(&out.stderr));
    // keys list with a wrong password fails the same way.
    let out = std::process::Command::new(metering_support::BIN)
        .args(["keys", "list", "--keys", keys.to_str().unwrap()])
        .args(["--plans", plans.to_str().unwrap(), "--usage-store", &wrong])
        .output()
        .unwrap();
    assert!(!out.status.success());
    hidden(&String::from_utf8_lossy(&out.stderr));

    // The right one: served and counted in Redis; the log lines of the start, of Redis
    // going away and of its return show the address without the password.
    let mut server = Server::start_with_stderr(&args(&url), std::process::Stdio::piped());
    let mut log = server.child.stderr.take().unwrap();
    assert_eq!(server.spend(&key), 39);
    assert_eq!(used_in_redis(&keys, &plans, &url), 1);
    redis.stop();
    assert_eq!(server.spend(&key), 38, "served on local counts");
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    while used_in_redis_or_none(&keys, &plans, &url) != Some(2) {
        assert!(Instant::now() < deadline, "not reconciled");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.terminate();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut log, &mut text).unwrap();
    hidden(&text);
    for line in [
        "event log: a mirror of the sequence shared at",
        "went away",
        "is back",
    ] {
        assert!(
            text.lines().any(|l| l.contains(line) && l.contains(&shown)),
            "no line with {line:?} and {shown}: {text}"
        );
    }
}

/// [`used_in_redis`], or `None` while `keys list` cannot reach Redis.
fn used_in_redis_or_none(
    keys: &std::path::Path,
    plans: &std::path::Path,
    url: &str,
) -> Option<u64> {
    let out = std::process::Command::new(metering_support::BIN)
        .args(["keys", "list", "--keys", keys.to_str()?])
        .args(["--plans", plans.to_str()?, "--usage-store", url])
        .output()
        .ok()?;
    let table = String::from_utf8(out.stdout).ok()?;
    let row = table.lines().nth(1)?;
    let cols: Vec<&str> = row.split_whitespace().collect();
    cols.get(cols.len().checked_sub(2)?)?.parse().ok()
}
