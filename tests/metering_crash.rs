//! Usage durability against the real binary: `tldsnap serve --data-dir` stopped cleanly
//! (SIGTERM) loses nothing; killed with SIGKILL it loses at most the counts of the last
//! second (the usage file is written once a second), and never counts a request twice.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Dir {
    let mut r = [0u8; 6];
    getrandom::fill(&mut r).unwrap();
    let p = std::env::temp_dir().join(format!(
        "tldsnap-crash-{}-{}",
        std::process::id(),
        r.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::create_dir_all(&p).unwrap();
    Dir(p)
}

fn run_ok(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "tldsnap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A two-registrar price source, its snapshot, and a keys file with one pro key.
fn setup(dir: &Path) -> (PathBuf, PathBuf, String) {
    let src = dir.join("source");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("registrars.csv"),
        "key,name,homepage\nalpha,Alpha,https://alpha.example\nbeta,Beta,https://beta.example\n",
    )
    .unwrap();
    std::fs::write(
        src.join("prices.csv"),
        "tld,registrar,register,renew,transfer,currency,updated_at\n\
         com,alpha,9.99,12.00,9.99,USD,2026-11-01T00:00:00Z\n\
         com,beta,8.50,13.00,8.50,USD,2026-11-01T00:00:00Z\n",
    )
    .unwrap();
    let snap = dir.join("prices.snap");
    run_ok(&[
        "build".as_ref(),
        "--input".as_ref(),
        src.as_os_str(),
        "--output".as_ref(),
        snap.as_os_str(),
    ]);
    let keys = dir.join("keys.json");
    let key = run_ok(&[
        "keys".as_ref(),
        "add".as_ref(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--plan".as_ref(),
        "pro".as_ref(),
    ]);
    (snap, keys, key.trim().to_string())
}

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(snap: &Path, keys: &Path, data: &Path) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = Command::new(BIN)
            .arg("serve")
            .arg("--snapshot")
            .arg(snap)
            .arg("--keys")
            .arg(keys)
            .arg("--data-dir")
            .arg(data)
            .arg("--addr")
            .arg(addr.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut s = Server { child, addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("serve exited early: {status}");
            }
            if s.get("/healthz", None).is_some_and(|(st, _)| st == 200) {
                return s;
            }
            assert!(Instant::now() < deadline, "serve did not become healthy");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One request on its own connection: (status, X-Credits-Remaining).
    fn get(&self, path: &str, key: Option<&str>) -> Option<(u16, Option<u64>)> {
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(2)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let mut req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        if let Some(k) = key {
            req.push_str(&format!("X-API-Key: {k}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).ok()?;
        let mut resp = Vec::new();
        s.read_to_end(&mut resp).ok()?;
        let text = String::from_utf8_lossy(&resp);
        let head = text.split("\r\n\r\n").next()?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        let credits = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-credits-remaining")
                .then(|| value.trim().parse().ok())
                .flatten()
        });
        Some((status, credits))
    }

    fn spend(&self, key: &str) -> u64 {
        let (status, credits) = self
            .get("/api/v1/client/prices/cheapest?tlds=com", Some(key))
            .expect("an answer");
        assert_eq!(status, 200);
        credits.expect("X-Credits-Remaining")
    }

    fn terminate(mut self) {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "clean shutdown exits 0, got {status}");
    }

    fn kill9(mut self) {
        self.child.kill().unwrap(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
    let dir = temp_dir();
    let (snap, keys, key) = setup(&dir.0);
    let data = dir.0.join("data");

    // 1. Clean shutdown: nothing lost.
    let s = Server::start(&snap, &keys, &data);
    for i in 1..=30 {
        assert_eq!(s.spend(&key), 10_000 - i);
    }
    let (status, credits) = s
        .get("/api/v1/client/prices/cheapest?tlds=com", None)
        .unwrap();
    assert_eq!((status, credits), (401, None), "no key, no credit");
    s.terminate();
    assert_eq!(used_on_disk(&data), 30);

    // 2. SIGKILL after the once-a-second flush: nothing lost.
    let s = Server::start(&snap, &keys, &data);
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
    let s = Server::start(&snap, &keys, &data);
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
    let s = Server::start(&snap, &keys, &data);
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
}

#[test]
fn keys_added_and_revoked_take_effect_on_sighup() {
    let dir = temp_dir();
    let (snap, keys, key) = setup(&dir.0);
    let s = Server::start(&snap, &keys, &dir.0.join("data"));
    let path = "/api/v1/client/prices/cheapest?tlds=com";
    assert_eq!(s.spend(&key), 9_999);

    let added = run_ok(&[
        "keys".as_ref(),
        "add".as_ref(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--plan".as_ref(),
        "basic".as_ref(),
    ]);
    let new_key = added.trim().to_string();
    assert_eq!(
        s.get(path, Some(&new_key)).unwrap().0,
        401,
        "not before SIGHUP"
    );
    let hup = || {
        let ok = Command::new("kill")
            .args(["-HUP", &s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    hup();
    let wait_for = |k: &str, want: u16| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (status, _) = s.get(path, Some(k)).unwrap();
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
    hup();
    wait_for(&key, 401);
    assert_eq!(s.get(path, Some(&new_key)).unwrap().0, 200);
    s.terminate();
}
