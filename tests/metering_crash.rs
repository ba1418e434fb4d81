//! Usage durability against the real binary: `tldsnap serve --data-dir` stopped cleanly
//! (SIGTERM) loses nothing; killed with SIGKILL it loses at most the counts of the last
//! second (the usage file is written once a second), and never counts a request twice.
//! Also: keys added and revoked with the CLI take effect on SIGHUP.

mod metering_support;

use std::path::Path;
use std::time::{Duration, Instant};

use metering_support::{CHEAPEST, Server, add_key, run_ok, snapshot, temp_dir};

/// The used count the usage file holds for the only key.
fn used_on_disk(data: &Path) -> u64 {
    let Ok(text) = std::fs::read_to_string(data.join("usage.json")) else {
        return 0;
    };
    let v: serde_json::Value = serde_json::from_str(&text).expect("the usage file is always whole");
    v["keys"]
        .as_object()
        .and_then(|m| m.values().next())
        .and_then(|e| e["used"].as_u64())
        .unwrap_or(0)
}

#[test]
fn usage_survives_sigterm_exactly_and_sigkill_within_one_second() {
    let dir = temp_dir("crash");
    let snap = snapshot(&dir.0);
    let keys = dir.0.join("keys.json");
    let key = add_key(&keys, "pro", &[]);
    let data = dir.0.join("data");
    let args = [
        "--snapshot".as_ref(),
        snap.as_os_str(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ];

    // 1. Clean shutdown: nothing lost.
    let s = Server::start(&args);
    for i in 1..=30 {
        assert_eq!(s.spend(&key), 10_000 - i);
    }
    assert_eq!(
        s.get(CHEAPEST, None).unwrap(),
        (401, None),
        "no key, no credit"
    );
    s.terminate();
    assert_eq!(used_on_disk(&data), 30);

    // 2. SIGKILL after the once-a-second flush: nothing lost.
    let s = Server::start(&args);
    assert_eq!(
        s.spend(&key),
        10_000 - 31,
        "restart after SIGTERM lost nothing"
    );
    for i in 32..=50 {
        assert_eq!(s.spend(&key), 10_000 - i);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while used_on_disk(&data) != 50 {
        assert!(Instant::now() < deadline, "usage never reached the disk");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.kill9();
    let s = Server::start(&args);
    assert_eq!(
        s.spend(&key),
        10_000 - 51,
        "restart after a flushed SIGKILL lost nothing"
    );

    // 3. SIGKILL right after a burst of 21 requests (well within one second): at most
    //    those are lost, and nothing is ever counted twice.
    for _ in 0..20 {
        s.spend(&key);
    }
    s.kill9();
    let s = Server::start(&args);
    let left = s.spend(&key);
    let used_before = 10_000 - left - 1;
    assert!(
        (50..=71).contains(&used_before),
        "after SIGKILL the restored count is {used_before}; 71 were served, 50 known flushed"
    );
    println!(
        "SIGKILL right after 21 requests: {} of them lost",
        71 - used_before
    );
    s.terminate();
    let mut files: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // The price-change event log, the website's session secret and the webhook
    // subscriptions' directory live in the data directory too.
    assert_eq!(
        files,
        ["events.log", "session-secret", "usage.json", "webhooks"],
        "no temporary file is left behind"
    );
}

#[test]
fn keys_added_and_revoked_take_effect_on_sighup() {
    let dir = temp_dir("sighup");
    let snap = snapshot(&dir.0);
    let keys = dir.0.join("keys.json");
    let key = add_key(&keys, "pro", &[]);
    let data = dir.0.join("data");
    let s = Server::start(&[
        "--snapshot".as_ref(),
        snap.as_os_str(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ]);
    assert_eq!(s.spend(&key), 9_999);

    let new_key = add_key(&keys, "basic", &[]);
    assert_eq!(
        s.get(CHEAPEST, Some(&new_key)).unwrap().0,
        401,
        "not before SIGHUP"
    );
    s.signal("HUP");
    let wait_for = |k: &str, want: u16| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (status, _) = s.get(CHEAPEST, Some(k)).unwrap();
            if status == want {
                return;
            }
            assert!(Instant::now() < deadline, "still {status}, expected {want}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(&new_key, 200);
    assert_eq!(
        s.spend(&new_key),
        1_000 - 2,
        "basic: 1,000 credits, two spent"
    );

    let records: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&keys).unwrap()).unwrap();
    let first_id = records[0]["id"].as_str().unwrap().to_string();
    run_ok(&[
        "keys".as_ref(),
        "revoke".as_ref(),
        "--keys".as_ref(),
        keys.as_os_str(),
        first_id.as_ref(),
    ]);
    s.signal("HUP");
    wait_for(&key, 401);
    assert_eq!(s.get(CHEAPEST, Some(&new_key)).unwrap().0, 200);
    s.terminate();
}
