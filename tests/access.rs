//! The access layer as the HTTP layer uses it: keys, plans, rate limits, credits and the
//! embedded durable usage store, with a controllable clock (no sleeps).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tldsnap::access::clock::{Clock, ManualClock};
use tldsnap::access::keys::KeysFile;
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig, Denial, KeyCache};
use tldsnap::time::{MS_PER_DAY, days_from_civil};

/// 2026-11-21T12:00:00Z
fn t0() -> i64 {
    days_from_civil(2026, 11, 21) * MS_PER_DAY + 12 * 3_600_000
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

struct Dir(PathBuf);
impl Dir {
    fn new(tag: &str) -> Dir {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).unwrap();
        let p = std::env::temp_dir().join(format!(
            "tldsnap-access-{tag}-{}-{}",
            std::process::id(),
            r.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a keys file with one key per plan name; returns the raw keys in order.
fn keys_file(path: &Path, plans: &[&str]) -> Vec<String> {
    let mut f = KeysFile::default();
    let raws = plans
        .iter()
        .map(|p| f.add(p, &format!("{p} customer")).unwrap().0)
        .collect();
    f.save(path).unwrap();
    raws
}

const SMALL: &str = r#"{"tiny": {"credits_per_month": 3, "rate_per_second": null, "burst": null,
                                 "tlds": "all", "registrar_list_limit": null},
                       "hundred": {"credits_per_month": 100, "rate_per_second": null, "burst": null,
                                   "tlds": "all", "registrar_list_limit": null}}"#;

async fn access<C: Clock>(
    dir: &Dir,
    plans: &[&str],
    clock: &Arc<C>,
    data: bool,
) -> (Access, Vec<String>) {
    let keys = dir.0.join("keys.json");
    let raws = if keys.exists() {
        Vec::new()
    } else {
        keys_file(&keys, plans)
    };
    let a = Access::new(AccessConfig {
        plans: Plans::from_json(SMALL).unwrap(),
        keys_path: Some(keys),
        data_dir: data.then(|| dir.0.join("data")),
        usage_store: None,
        clock: clock.clone(),
    })
    .await
    .unwrap();
    (a, raws)
}

#[tokio::test]
async fn missing_and_unknown_keys_are_401_and_public_calls_are_the_public_plan() {
    let dir = Dir::new("auth");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["pro", "free"], &clock, false).await;
    let c = ip("192.0.2.7");
    assert_eq!(
        a.admit(None, c, true).await.unwrap_err(),
        Denial::MissingKey
    );
    for requires in [true, false] {
        let bad = a.admit(Some(b"tsk_nope"), c, requires).await.unwrap_err();
        assert_eq!(bad, Denial::InvalidKey);
        assert_eq!((bad.status(), bad.code()), (401, "invalid_api_key"));
        assert_eq!(
            a.admit(Some(b""), c, requires).await.unwrap_err(),
            Denial::InvalidKey
        );
    }
    let public = a.admit(None, c, false).await.unwrap();
    assert_eq!(public.tier(), "public");
    assert!(public.key_id().is_none());
    assert!(public.tld_allowed("com") && !public.tld_allowed("co.uk"));
    assert_eq!(public.sight().seller_limit(), Some(5));
    assert_eq!(public.headers.unwrap().credits_remaining, None);

    let pro = a.admit(Some(raws[0].as_bytes()), c, true).await.unwrap();
    assert_eq!(pro.tier(), "pro");
    assert!(pro.tld_allowed("co.uk") && pro.tld_allowed("fr"));
    assert_eq!(pro.sight().seller_limit(), None);
    let h = pro.headers.unwrap();
    assert_eq!(
        (h.limit, h.remaining, h.credits_remaining),
        (100, 99, Some(10_000))
    );
    let free = a.admit(Some(raws[1].as_bytes()), c, false).await.unwrap();
    assert_eq!(free.tier(), "free");
    assert!(free.tld_allowed("io") && !free.tld_allowed("fr"));
    assert_eq!(free.sight().seller_limit(), Some(5));
    // A key with trailing junk is another key.
    let mut longer = raws[0].clone().into_bytes();
    longer.push(b'x');
    assert_eq!(
        a.admit(Some(&longer), c, true).await.unwrap_err(),
        Denial::InvalidKey
    );
}

#[tokio::test]
async fn burst_then_throttle_then_refill() {
    let dir = Dir::new("burst");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["free"], &clock, false).await;
    let key = Some(raws[0].as_bytes());
    let c = ip("192.0.2.7");
    // free: 1 per second sustained, burst 5.
    for left in (0..5).rev() {
        let h = a.admit(key, c, true).await.unwrap().headers.unwrap();
        assert_eq!((h.limit, h.remaining), (5, left));
    }
    let denied = a.admit(key, c, true).await.unwrap_err();
    let Denial::RateLimited {
        retry_after_secs,
        headers: Some(h),
    } = denied
    else {
        panic!("expected rate_limited, got {denied:?}");
    };
    assert_eq!((retry_after_secs, h.remaining, h.reset_secs), (1, 0, 5));
    assert_eq!(h.credits_remaining, Some(50), "a refusal spends no credit");
    clock.advance(999);
    assert!(a.admit(key, c, true).await.is_err(), "not yet refilled");
    clock.advance(1);
    assert!(
        a.admit(key, c, true).await.is_ok(),
        "one token after one second"
    );
    assert!(a.admit(key, c, true).await.is_err());
    clock.advance(60_000);
    let h = a.admit(key, c, true).await.unwrap().headers.unwrap();
    assert_eq!(h.remaining, 4, "bucket full again after a quiet minute");
}

/// A clock whose ordinary reading can fall behind, as `CLOCK_REALTIME_COARSE` does when
/// the host steals the CPU that keeps time (its tick comes late), and whose precise
/// reading does not.
struct LateClock {
    precise: ManualClock,
    late_ms: std::sync::atomic::AtomicI64,
}

impl Clock for LateClock {
    fn now_ms(&self) -> i64 {
        self.precise.now_ms() - self.late_ms.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn precise_now_ms(&self) -> i64 {
        self.precise.now_ms()
    }
}

#[tokio::test]
async fn rate_limits_decide_by_the_precise_clock() {
    let dir = Dir::new("late");
    let clock = Arc::new(LateClock {
        precise: ManualClock::new(t0()),
        late_ms: 0.into(),
    });
    let (a, raws) = access(&dir, &["free"], &clock, false).await;
    let key = Some(raws[0].as_bytes());
    let c = ip("192.0.2.7");
    // free: 1 a second, burst 5; public: 10 a second, burst 20.
    for _ in 0..5 {
        a.admit(key, c, true).await.unwrap();
    }
    for _ in 0..20 {
        a.admit(None, c, false).await.unwrap();
    }
    assert!(a.admit(key, c, true).await.is_err());
    assert!(a.admit(None, c, false).await.is_err());
    // The ordinary clock falls 50 ms behind; a token is still due exactly one interval
    // after the burst.
    clock.late_ms.store(50, std::sync::atomic::Ordering::SeqCst);
    clock.precise.advance(100);
    a.admit(None, c, false).await.unwrap();
    assert!(a.admit(None, c, false).await.is_err());
    clock.precise.advance(900);
    a.admit(key, c, true).await.unwrap();
    assert!(a.admit(key, c, true).await.is_err());
}

#[tokio::test]
async fn public_calls_are_limited_per_client_address() {
    let dir = Dir::new("public");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, _) = access(&dir, &[], &clock, false).await;
    for _ in 0..20 {
        a.admit(None, ip("198.51.100.1"), false).await.unwrap();
    }
    let d = a.admit(None, ip("198.51.100.1"), false).await.unwrap_err();
    assert_eq!((d.code(), d.retry_after_secs()), ("rate_limited", Some(1)));
    a.admit(None, ip("198.51.100.2"), false).await.unwrap();
    clock.advance(100);
    a.admit(None, ip("198.51.100.1"), false).await.unwrap();
}

#[tokio::test]
async fn credits_run_out_until_the_month_turns() {
    let dir = Dir::new("credits");
    // 2026-11-30T23:59:58.500Z: 1.5 s before December.
    let start = days_from_civil(2026, 12, 1) * MS_PER_DAY - 1_500;
    let clock = Arc::new(ManualClock::new(start));
    let (a, raws) = access(&dir, &["tiny"], &clock, false).await;
    let key = Some(raws[0].as_bytes());
    let c = ip("192.0.2.9");
    for left in [2, 1, 0] {
        let mut caller = a.admit(key, c, true).await.unwrap();
        a.spend(&mut caller).await.unwrap();
        assert_eq!(caller.headers.unwrap().credits_remaining, Some(left));
    }
    let mut caller = a.admit(key, c, true).await.unwrap();
    assert_eq!(caller.headers.unwrap().credits_remaining, Some(0));
    let d = a.spend(&mut caller).await.unwrap_err();
    let Denial::CreditsExhausted {
        retry_after_secs,
        headers,
    } = d
    else {
        panic!("{d:?}")
    };
    assert_eq!(
        retry_after_secs, 2,
        "until 2026-12-01T00:00:00Z, rounded up"
    );
    assert_eq!(headers.credits_remaining, Some(0));
    assert_eq!(a.used_this_month(&raws[0].clone()), 0, "ids, not raw keys");
    clock.advance(1_500);
    let mut caller = a.admit(key, c, true).await.unwrap();
    assert_eq!(
        caller.headers.unwrap().credits_remaining,
        Some(3),
        "a new month"
    );
    a.spend(&mut caller).await.unwrap();
    assert_eq!(caller.headers.unwrap().credits_remaining, Some(2));
    // Public callers spend nothing.
    let mut public = a.admit(None, c, false).await.unwrap();
    a.spend(&mut public).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_n_of_64_concurrent_callers_succeed() {
    let dir = Dir::new("concurrent");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["hundred"], &clock, false).await;
    let a = Arc::new(a);
    // Use 37 credits first, so that N = 63 are left for 64 callers making 4 calls each.
    for _ in 0..37 {
        let mut c = a
            .admit(Some(raws[0].as_bytes()), ip("192.0.2.1"), true)
            .await
            .unwrap();
        a.spend(&mut c).await.unwrap();
    }
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let a = a.clone();
        let key = raws[0].clone();
        tasks.push(tokio::spawn(async move {
            let mut ok = 0u32;
            let mut remaining_seen = Vec::new();
            for _ in 0..4 {
                let mut c = a
                    .admit(Some(key.as_bytes()), ip("192.0.2.1"), true)
                    .await
                    .unwrap();
                if a.spend(&mut c).await.is_ok() {
                    ok += 1;
                    remaining_seen.push(c.headers.unwrap().credits_remaining.unwrap());
                }
            }
            (ok, remaining_seen)
        }));
    }
    let mut ok = 0;
    let mut seen = Vec::new();
    for t in tasks {
        let (n, r) = t.await.unwrap();
        ok += n;
        seen.extend(r);
    }
    assert_eq!(ok, 63);
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..63).collect::<Vec<u64>>(),
        "each credit handed out once"
    );
    let mut c = a
        .admit(Some(raws[0].as_bytes()), ip("192.0.2.1"), true)
        .await
        .unwrap();
    assert_eq!(c.headers.unwrap().credits_remaining, Some(0));
    assert!(a.spend(&mut c).await.is_err());
}

#[tokio::test]
async fn usage_survives_a_restart_after_shutdown() {
    let dir = Dir::new("restart");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["hundred", "tiny"], &clock, true).await;
    for _ in 0..7 {
        let mut c = a
            .admit(Some(raws[0].as_bytes()), ip("192.0.2.1"), true)
            .await
            .unwrap();
        a.spend(&mut c).await.unwrap();
    }
    let mut c = a
        .admit(Some(raws[1].as_bytes()), ip("192.0.2.1"), true)
        .await
        .unwrap();
    a.spend(&mut c).await.unwrap();
    a.shutdown().await.unwrap();
    drop(a);
    let text = std::fs::read_to_string(dir.0.join("data/usage.json")).unwrap();
    assert!(text.contains("\"2026-11\""), "{text}");

    let (b, _) = access(&dir, &[], &clock, true).await;
    let h = b
        .admit(Some(raws[0].as_bytes()), ip("192.0.2.1"), true)
        .await
        .unwrap()
        .headers
        .unwrap();
    assert_eq!(h.credits_remaining, Some(93));
    let mut c = b
        .admit(Some(raws[1].as_bytes()), ip("192.0.2.1"), true)
        .await
        .unwrap();
    assert_eq!(c.headers.unwrap().credits_remaining, Some(2));
    b.spend(&mut c).await.unwrap();
    b.shutdown().await.unwrap();
    drop(b);

    // Next month, the stored counts no longer apply.
    clock.set(days_from_civil(2026, 12, 1) * MS_PER_DAY);
    let (c2, _) = access(&dir, &[], &clock, true).await;
    let h = c2
        .admit(Some(raws[1].as_bytes()), ip("192.0.2.1"), true)
        .await
        .unwrap()
        .headers
        .unwrap();
    assert_eq!(h.credits_remaining, Some(3));
}

#[tokio::test]
async fn a_corrupt_usage_file_is_refused_with_a_clear_error() {
    let dir = Dir::new("corrupt");
    let clock = Arc::new(ManualClock::new(t0()));
    std::fs::create_dir_all(dir.0.join("data")).unwrap();
    std::fs::write(
        dir.0.join("data/usage.json"),
        b"{\"format\": \"tldsnap-usage\", ",
    )
    .unwrap();
    keys_file(&dir.0.join("keys.json"), &["pro"]);
    let err = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: Some(dir.0.join("keys.json")),
        data_dir: Some(dir.0.join("data")),
        usage_store: None,
        clock: clock.clone(),
    })
    .await
    .err()
    .expect("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("usage.json") && msg.contains("move it aside"),
        "{msg}"
    );
}

#[tokio::test]
async fn reloading_keys_adds_and_revokes_and_a_bad_file_keeps_the_old_keys() {
    let dir = Dir::new("reload");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["hundred"], &clock, false).await;
    let path = dir.0.join("keys.json");
    let c = ip("192.0.2.1");
    let mut caller = a.admit(Some(raws[0].as_bytes()), c, true).await.unwrap();
    a.spend(&mut caller).await.unwrap();

    let mut f = KeysFile::load(&path, None).unwrap();
    let (raw2, _) = f.add("basic", "second").unwrap();
    f.save(&path).unwrap();
    assert_eq!(a.reload_keys().unwrap(), 2);
    assert_eq!(
        a.admit(Some(raw2.as_bytes()), c, true)
            .await
            .unwrap()
            .tier(),
        "basic"
    );
    // Usage is kept across reloads.
    let h = a
        .admit(Some(raws[0].as_bytes()), c, true)
        .await
        .unwrap()
        .headers
        .unwrap();
    assert_eq!(h.credits_remaining, Some(99));

    std::fs::write(&path, b"[{\"id\": 1}]").unwrap();
    let err = a.reload_keys().unwrap_err().to_string();
    assert!(err.contains("keys.json"), "{err}");
    assert!(
        a.admit(Some(raw2.as_bytes()), c, true).await.is_ok(),
        "old keys kept"
    );

    let id = f.keys[0].id.clone();
    f.revoke(&id).unwrap();
    f.save(&path).unwrap();
    assert_eq!(a.reload_keys().unwrap(), 1);
    assert_eq!(
        a.admit(Some(raws[0].as_bytes()), c, true)
            .await
            .unwrap_err(),
        Denial::InvalidKey
    );
    assert!(a.admit(Some(raw2.as_bytes()), c, true).await.is_ok());
}

#[tokio::test]
async fn configuration_errors_name_the_file_and_the_fix() {
    let dir = Dir::new("config");
    let clock = Arc::new(ManualClock::new(t0()));
    let missing = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: Some(dir.0.join("nope.json")),
        data_dir: None,
        usage_store: None,
        clock: clock.clone(),
    })
    .await
    .err()
    .expect("refused")
    .to_string();
    assert!(
        missing.contains("nope.json") && missing.contains("keys add"),
        "{missing}"
    );

    let mut f = KeysFile::default();
    f.add("gold", "").unwrap();
    f.save(&dir.0.join("k.json")).unwrap();
    let unknown = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: Some(dir.0.join("k.json")),
        data_dir: None,
        usage_store: None,
        clock: clock.clone(),
    })
    .await
    .err()
    .expect("refused")
    .to_string();
    assert!(unknown.contains("unknown plan \"gold\""), "{unknown}");

    let bad_url = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: None,
        data_dir: None,
        usage_store: Some("memcached://x".into()),
        clock,
    })
    .await
    .err()
    .expect("refused")
    .to_string();
    assert!(bad_url.contains("redis://HOST:PORT"), "{bad_url}");

    std::fs::write(dir.0.join("plans.json"), br#"{"pro": {"burst": 5}}"#).unwrap();
    let plans = Plans::load(&dir.0.join("plans.json"))
        .unwrap_err()
        .to_string();
    assert!(
        plans.contains("plans.json") && plans.contains("plan \"pro\""),
        "{plans}"
    );
}

#[tokio::test]
async fn without_a_keys_file_every_client_call_is_401() {
    let a = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: None,
        data_dir: None,
        usage_store: None,
        clock: Arc::new(ManualClock::new(t0())),
    })
    .await
    .unwrap();
    assert_eq!(a.key_count(), 0);
    assert_eq!(
        a.admit(Some(b"tsk_anything"), ip("::1"), true)
            .await
            .unwrap_err(),
        Denial::InvalidKey
    );
    assert!(a.admit(None, ip("::1"), false).await.is_ok());
}

#[tokio::test]
async fn a_plans_file_can_change_the_public_plan_and_make_a_plan_unlimited() {
    let dir = Dir::new("override");
    let clock = Arc::new(ManualClock::new(t0()));
    let plans = Plans::from_json(
        r#"{"public": {"credits_per_month": null, "rate_per_second": 1, "burst": 2,
                       "tlds": "free", "registrar_list_limit": 3},
            "open": {"credits_per_month": null, "rate_per_second": null, "burst": null,
                     "tlds": "all", "registrar_list_limit": null}}"#,
    )
    .unwrap();
    let keys = dir.0.join("keys.json");
    let raws = keys_file(&keys, &["open"]);
    let a = Access::new(AccessConfig {
        plans,
        keys_path: Some(keys),
        data_dir: Some(dir.0.join("data")),
        usage_store: None,
        clock: clock.clone(),
    })
    .await
    .unwrap();
    let c = ip("203.0.113.5");
    let p = a.admit(None, c, false).await.unwrap();
    assert_eq!(p.sight().seller_limit(), Some(3));
    a.admit(None, c, false).await.unwrap();
    assert!(a.admit(None, c, false).await.is_err(), "public burst of 2");

    for _ in 0..5_000 {
        let mut caller = a.admit(Some(raws[0].as_bytes()), c, true).await.unwrap();
        let h = caller.headers.unwrap();
        assert_eq!(
            (h.limit, h.remaining, h.credits_remaining),
            (u32::MAX, u32::MAX, None)
        );
        a.spend(&mut caller).await.unwrap();
    }
    let id = KeysFile::load(&dir.0.join("keys.json"), None).unwrap().keys[0]
        .id
        .clone();
    assert_eq!(
        a.used_this_month(&id),
        5_000,
        "unlimited plans are still counted"
    );
}

#[tokio::test]
async fn a_connection_key_cache_follows_key_changes_and_reloads() {
    let dir = Dir::new("keycache");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["hundred", "tiny"], &clock, false).await;
    let path = dir.0.join("keys.json");
    let c = ip("192.0.2.9");
    let mut cache = KeyCache::default();
    // The same key twice, then another key, then a wrong one, on one connection.
    let wrong = format!("{}x", &raws[1][..raws[1].len() - 1]);
    for (raw, want) in [
        (&raws[0], Some("hundred")),
        (&raws[0], Some("hundred")),
        (&raws[1], Some("tiny")),
        (&wrong, None),
        (&raws[1], Some("tiny")),
    ] {
        let r = a
            .admit_cached(&mut cache, Some(raw.as_bytes()), c, true)
            .await;
        match want {
            Some(tier) => assert_eq!(r.unwrap().tier(), tier),
            None => assert_eq!(r.unwrap_err(), Denial::InvalidKey),
        }
    }

    // Revoked and reloaded: the cached answer for this very key must not survive.
    let mut f = KeysFile::load(&path, None).unwrap();
    let id = f.keys[1].id.clone();
    f.revoke(&id).unwrap();
    f.save(&path).unwrap();
    a.reload_keys().unwrap();
    let r = a
        .admit_cached(&mut cache, Some(raws[1].as_bytes()), c, true)
        .await;
    assert_eq!(r.unwrap_err(), Denial::InvalidKey);
}

#[tokio::test]
async fn free_searches_run_out_until_the_utc_day_turns() {
    let dir = Dir::new("searches");
    let clock = Arc::new(ManualClock::new(t0()));
    let (a, raws) = access(&dir, &["free", "pro"], &clock, false).await;
    let c = ip("192.0.2.9");
    let (free, pro) = (Some(raws[0].as_bytes()), Some(raws[1].as_bytes()));
    for left in (0..5).rev() {
        let caller = a.admit(free, c, true).await.unwrap();
        assert_eq!(a.take_search(&caller), Ok(Some(left)));
        clock.advance(2_000);
    }
    let caller = a.admit(free, c, true).await.unwrap();
    // 12:00:10 UTC: 11 h 59 min 50 s to midnight.
    assert_eq!(a.take_search(&caller), Err(12 * 3600 - 10));
    // Another key of the same plan has its own count; pro has no daily limit.
    let other = a.admit(pro, c, true).await.unwrap();
    for _ in 0..20 {
        assert_eq!(a.take_search(&other), Ok(None));
    }
    // One millisecond before midnight: still refused, Retry-After at least 1.
    clock.set(t0() + 12 * 3_600_000 - 1);
    let caller = a.admit(free, c, true).await.unwrap();
    assert_eq!(a.take_search(&caller), Err(1));
    clock.set(t0() + 12 * 3_600_000);
    let caller = a.admit(free, c, true).await.unwrap();
    assert_eq!(a.take_search(&caller), Ok(Some(4)));
}

#[tokio::test]
async fn a_multi_credit_answer_is_all_or_nothing() {
    let dir = Dir::new("spend-n");
    let clock = Arc::new(ManualClock::new(t0()));
    // tiny: 3 credits a month.
    let (a, raws) = access(&dir, &["tiny"], &clock, false).await;
    let key = Some(raws[0].as_bytes());
    let c = ip("192.0.2.10");
    let mut caller = a.admit(key, c, true).await.unwrap();
    a.spend_n(&mut caller, 2).await.unwrap();
    assert_eq!(caller.headers.unwrap().credits_remaining, Some(1));
    let mut caller = a.admit(key, c, true).await.unwrap();
    let denial = a.spend_n(&mut caller, 2).await.unwrap_err();
    assert_eq!(denial.code(), "credits_exhausted");
    // Nothing was taken by the refusal: one credit is still there.
    let mut caller = a.admit(key, c, true).await.unwrap();
    a.spend_n(&mut caller, 1).await.unwrap();
    assert_eq!(caller.headers.unwrap().credits_remaining, Some(0));
}
