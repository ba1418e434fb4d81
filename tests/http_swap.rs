//! Hot swap (contract 6): snapshots swapped under load lose no request, a bad file is
//! refused while the old snapshot keeps serving, `--watch` and SIGHUP reload, SIGTERM
//! drains; and the real binary serves the shipped real data.

mod http_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_support::{Binary, Conn, Options, Server, TempDir, publish, publish_bytes};

/// The fixture (A) and the fixture with Délta's `com` registration at 1.23 (B).
fn two_snapshots(dir: &TempDir) -> (PathBuf, PathBuf) {
    let a = dir.fixture_snapshot("a.snap");
    let b = dir.edited_snapshot("b.snap", |prices| {
        let edited = prices.replace("com,delta,8.88,15.00,8.88", "com,delta,1.23,15.00,8.88");
        assert_ne!(edited, prices, "the fixture changed: update this edit");
        edited
    });
    (a, b)
}

const PROBE: &str = "/api/v1/client/prices/cheapest?tlds=com&limit=1";

/// Polls `check` every 10 ms until it holds or 10 s pass (a readiness poll, not a
/// timing assertion).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn twenty_swaps_under_load_lose_no_request() {
    let dir = TempDir::new("swap");
    let (a, b) = two_snapshots(&dir);
    let live = dir.path("live.snap");
    publish(&a, &live);
    let (keys_path, keys) = dir.keys();
    let server = Server::start(Options::new(&live, &keys_path));
    let key = keys["unlimited"].clone();

    let body_a = server.get(PROBE, Some(&key)).body;
    publish(&b, &live);
    server.state.store.reload().unwrap();
    let body_b = server.get(PROBE, Some(&key)).body;
    assert_ne!(body_a, body_b);
    assert!(String::from_utf8_lossy(&body_b).contains("\"register_price\":1.23"));
    publish(&a, &live);
    server.state.store.reload().unwrap();
    let swaps_before = server.state.store.reload_successes();

    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (stop, total, key) = (Arc::clone(&stop), Arc::clone(&total), key.clone());
            let (body_a, body_b, addr) = (body_a.clone(), body_b.clone(), server.addr);
            std::thread::spawn(move || {
                let (mut seen_a, mut seen_b, mut failures) = (0u64, 0u64, Vec::new());
                let mut conn = Conn::open(addr);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // Mostly keep-alive; a fresh connection now and then.
                    if n % 50 == 49 {
                        conn = Conn::open(addr);
                    }
                    n += 1;
                    conn.get(PROBE, Some(&key));
                    match conn.read_response(false) {
                        Ok(Some(r)) if r.status == 200 && r.body == body_a => seen_a += 1,
                        Ok(Some(r)) if r.status == 200 && r.body == body_b => seen_b += 1,
                        other => failures.push(format!("client {client}: {other:?}")),
                    }
                    total.fetch_add(1, Ordering::Relaxed);
                }
                (seen_a, seen_b, failures)
            })
        })
        .collect();

    let started = Instant::now();
    for swap in 0..20 {
        let (next, expected) = if swap % 2 == 0 {
            (&b, &body_b)
        } else {
            (&a, &body_a)
        };
        // Let the clients send a few requests on the current snapshot first.
        let mark = total.load(Ordering::Relaxed);
        eventually("client traffic", || {
            total.load(Ordering::Relaxed) >= mark + 40
        });
        publish(next, &live);
        server.state.store.reload().unwrap();
        // The change is visible at once to a new request.
        assert_eq!(&server.get(PROBE, Some(&key)).body, expected, "swap {swap}");
    }
    let mark = total.load(Ordering::Relaxed);
    eventually("client traffic", || {
        total.load(Ordering::Relaxed) >= mark + 40
    });
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed();

    let (mut seen_a, mut seen_b, mut failures) = (0, 0, Vec::new());
    for c in clients {
        let (x, y, f) = c.join().unwrap();
        seen_a += x;
        seen_b += y;
        failures.extend(f);
    }
    eprintln!(
        "swap test: 20 swaps, 4 clients, {} requests ({seen_a} on A, {seen_b} on B) in {elapsed:?}, {} failed",
        seen_a + seen_b + failures.len() as u64,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failed requests, first: {:?}",
        failures.len(),
        failures.first()
    );
    assert!(seen_a > 0 && seen_b > 0);
    assert_eq!(server.state.store.reload_successes() - swaps_before, 20);
    assert_eq!(server.state.store.reload_failures(), 0);
}

#[test]
fn a_corrupted_snapshot_is_refused_and_the_old_one_keeps_serving() {
    let dir = TempDir::new("corrupt");
    let (a, b) = two_snapshots(&dir);
    let live = dir.path("live.snap");
    publish(&a, &live);
    let (keys_path, keys) = dir.keys();
    let server = Server::start(Options::new(&live, &keys_path));
    let key = keys["unlimited"].clone();
    let hash_a = server.get("/readyz", None).json()["snapshot"]["hash"].clone();
    let body_a = server.get(PROBE, Some(&key)).body;

    let good_b = std::fs::read(&b).unwrap();
    let mut flipped = good_b.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x01;
    let mut wrong_magic = good_b.clone();
    wrong_magic[0] ^= 0xff;
    let mut wrong_version = good_b.clone();
    wrong_version[8] = wrong_version[8].wrapping_add(1);
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("one flipped bit", flipped),
        ("truncated", good_b[..good_b.len() / 2].to_vec()),
        ("header only", good_b[..64.min(good_b.len())].to_vec()),
        ("empty", Vec::new()),
        ("not a snapshot", b"hello, I am not a snapshot\n".to_vec()),
        ("wrong magic", wrong_magic),
        ("wrong version", wrong_version),
    ];
    for (i, (what, bytes)) in bad.iter().enumerate() {
        publish_bytes(bytes, &live);
        let err = server.state.store.reload().expect_err(what);
        assert!(!err.to_string().is_empty());
        assert_eq!(server.state.store.reload_failures(), i as u64 + 1, "{what}");
        // Still serving A, answering real requests.
        assert_eq!(
            server.get("/readyz", None).json()["snapshot"]["hash"],
            hash_a,
            "{what}"
        );
        assert_eq!(server.get(PROBE, Some(&key)).body, body_a, "{what}");
    }
    // A file that vanished is refused the same way.
    std::fs::remove_file(&live).unwrap();
    assert!(server.state.store.reload().is_err());
    let metrics = server.get("/metrics", None).text();
    let failures = bad.len() + 1;
    assert!(
        metrics.contains(&format!(
            "tldsnap_snapshot_reloads_total{{result=\"failure\"}} {failures}\n"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!("tldsnap_snapshot_info{{hash={hash_a},")),
        "{metrics}"
    );
    // A good file is taken.
    publish(&b, &live);
    server.state.store.reload().unwrap();
    assert_ne!(server.get(PROBE, Some(&key)).body, body_a);
}

#[test]
fn watch_reloads_a_replaced_file() {
    let dir = TempDir::new("watch");
    let (a, b) = two_snapshots(&dir);
    let live = dir.path("live.snap");
    publish(&a, &live);
    let (keys_path, _) = dir.keys();
    let server = Server::start(Options::new(&live, &keys_path));
    let hash_a = server.get("/readyz", None).json()["snapshot"]["hash"].clone();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let store = Arc::clone(&server.state.store);
    let watcher = std::thread::spawn(move || {
        runtime.block_on(store.watch(
            Duration::from_millis(20),
            async {
                let _ = stopped.await;
            },
            |_| {},
        ))
    });
    publish(&b, &live);
    eventually("the watcher to load B", || {
        server.get("/readyz", None).json()["snapshot"]["hash"] != hash_a
    });
    let hash_b = server.get("/readyz", None).json()["snapshot"]["hash"].clone();
    // A bad replacement is refused and counted; B keeps serving.
    publish_bytes(b"garbage", &live);
    eventually("the watcher to refuse garbage", || {
        server.state.store.reload_failures() == 1
    });
    assert_eq!(
        server.get("/readyz", None).json()["snapshot"]["hash"],
        hash_b
    );
    let _ = stop.send(());
    watcher.join().unwrap();
}

#[test]
fn shutdown_closes_idle_connections_and_returns() {
    let dir = TempDir::new("drain");
    let snap = dir.fixture_snapshot("a.snap");
    let (keys_path, _) = dir.keys();
    let server = Server::start(Options::new(&snap, &keys_path));
    let mut idle = Conn::open(server.addr);
    idle.get("/healthz", None);
    assert_eq!(idle.read_response(false).unwrap().unwrap().status, 200);
    let addr = server.addr;
    server.stop().unwrap();
    assert!(idle.is_closed());
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "still accepting after shutdown"
    );
}

fn path_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_binary_reloads_on_sighup_and_drains_on_sigterm() {
    let dir = TempDir::new("binary");
    let (a, b) = two_snapshots(&dir);
    let live = dir.path("live.snap");
    publish(&a, &live);
    let (keys_path, keys) = dir.keys();
    let plans = dir.path("plans.json");
    std::fs::write(&plans, http_support::TEST_PLANS).unwrap();
    let mut bin = Binary::start(&[
        "--snapshot",
        path_arg(&live),
        "--keys",
        path_arg(&keys_path),
        "--plans",
        path_arg(&plans),
        "--public-url",
        "https://prices.example/",
    ]);
    let hash_a = bin.hash();
    let r = bin.get("/api/v1/client/registrars/tld/net", Some(&keys["pro"]));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["registrars"][0]["website_url"],
        "https://prices.example/registrars/alpha"
    );

    // SIGHUP with a new file: swapped.
    publish(&b, &live);
    bin.signal("HUP");
    bin.wait_for("reloaded: now serving");
    assert_ne!(bin.hash(), hash_a);
    let hash_b = bin.hash();
    // SIGHUP with a bad file: refused, logged, counted; B keeps serving.
    publish_bytes(b"not a snapshot", &live);
    bin.signal("HUP");
    bin.wait_for("reload refused");
    assert_eq!(bin.hash(), hash_b);
    assert!(
        bin.get("/metrics", None)
            .text()
            .contains("tldsnap_snapshot_reloads_total{result=\"failure\"} 1\n")
    );
    // SIGHUP also reloads the keys: a key added to the file starts working.
    let mut file = tldsnap::access::keys::KeysFile::load(&keys_path, None).unwrap();
    let (new_key, _) = file.add("basic", "added later").unwrap();
    file.save(&keys_path).unwrap();
    assert_eq!(bin.get(PROBE, Some(&new_key)).status, 401);
    bin.signal("HUP");
    // The six keys of the fixture plus the new one (an earlier SIGHUP's "keys
    // reloaded" line may still be queued: wait for this one's).
    bin.wait_for("keys reloaded: 7 key(s) in force");
    assert_eq!(bin.get(PROBE, Some(&new_key)).status, 200);

    // SIGTERM: a clean exit, code 0.
    bin.signal("TERM");
    bin.wait_for("stopped");
    let status = bin.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn the_binary_without_a_snapshot_serves_the_shipped_real_data() {
    // Today as the docs' examples take it, so that which prices are stale stays put.
    let mut bin = Binary::start(&["--today", "2026-12-01"]);
    let r = bin.get("/v1/prices?tlds=com,xyz&registrars=dynadot,spaceship", None);
    assert_eq!(r.status, 200, "{}", r.text());
    let doc = r.json();
    assert_eq!(doc["results"]["com"]["spaceship"]["register_price"], 9.08);
    assert_eq!(doc["results"]["xyz"]["dynadot"]["register_price"], 1.99);
    // Dynadot is com's seventh seller: without a key, the five cheapest are shown.
    assert!(doc["results"]["com"].get("dynadot").is_none(), "{doc}");
    // The five cheapest, of which Cloudflare's price (2024) is stale: left out unless
    // asked for (docs/API.md, "Old prices").
    let entries = |path: &str| {
        let doc = bin.get(path, None).json();
        assert!(doc["results"]["com"]["registrar_count"].as_u64().unwrap() >= 5);
        doc["results"]["com"]["cheapest_register"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(entries("/api/v1/prices/cheapest?tlds=com&limit=5"), 4);
    assert_eq!(
        entries("/api/v1/prices/cheapest?tlds=com&limit=5&include_stale=true"),
        5
    );
    assert_eq!(bin.get("/api/v1/client/prices?tlds=com", None).status, 401);
    bin.signal("INT");
    bin.wait_for("stopped");
    assert!(bin.child.wait().unwrap().success());
}

#[test]
fn the_binary_refuses_bad_flags_and_bad_files() {
    let dir = TempDir::new("badflags");
    let bad = dir.path("bad.snap");
    std::fs::write(&bad, b"nope").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tldsnap"))
            .arg("serve")
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--snapshot", path_arg(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["--public-url", "not a url"]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["--watch"]);
    assert_eq!(out.status.code(), Some(2), "--watch needs --snapshot");
    let out = run(&["--keys", path_arg(&dir.path("missing.json"))]);
    assert_eq!(out.status.code(), Some(1));
}

/// A `--threads 1` server is one thread between its blocking jobs (the trimmer, the
/// usage file written every second from a data directory): each runs on a thread that
/// ends with it (`tldsnap::blocking`). While another thread lives, Linux shares the
/// process's file table and every system call of the serving thread takes and drops a
/// reference on its socket (docs/PERFORMANCE.md, session 19); with tokio's default of
/// 10 s such a server kept 3 threads for good.
#[cfg(target_os = "linux")]
#[test]
fn a_lone_serving_thread_is_the_process_s_only_thread_between_blocking_jobs() {
    let dir = TempDir::new("lone");
    let snap = dir.fixture_snapshot("a.snap");
    let (keys_path, keys) = dir.keys();
    let plans = dir.path("plans.json");
    std::fs::write(&plans, http_support::TEST_PLANS).unwrap();
    let data = dir.path("data");
    let bin = Binary::start(&[
        "--threads",
        "1",
        "--snapshot",
        path_arg(&snap),
        "--keys",
        path_arg(&keys_path),
        "--plans",
        path_arg(&plans),
        "--data-dir",
        path_arg(&data),
    ]);
    let threads = || {
        std::fs::read_dir(format!("/proc/{}/task", bin.child.id()))
            .unwrap()
            .count()
    };
    // Three seconds of a keyed request every 100 ms: the usage file changes and is
    // written every second, and the trimmer has run.
    let mut samples = Vec::new();
    for _ in 0..30 {
        assert_eq!(bin.get(PROBE, Some(&keys["pro"])).status, 200);
        samples.push(threads());
        std::thread::sleep(Duration::from_millis(100));
    }
    let alone = samples.iter().filter(|&&n| n == 1).count();
    assert!(
        alone >= samples.len() / 4,
        "one thread in {alone} of {} samples: {samples:?}",
        samples.len()
    );
}

/// Sends `PROBE` over keep-alive connections from 4 threads until `stop`; returns how many
/// were answered with 200 and every other outcome.
fn probe_load(
    addr: std::net::SocketAddr,
    key: &str,
    stop: &Arc<AtomicBool>,
    total: &Arc<AtomicU64>,
) -> Vec<std::thread::JoinHandle<(u64, Vec<String>)>> {
    (0..4)
        .map(|client| {
            let (stop, total, key) = (Arc::clone(stop), Arc::clone(total), key.to_owned());
            std::thread::spawn(move || {
                let (mut ok, mut failures) = (0u64, Vec::new());
                let mut conn = Conn::open(addr);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if n % 50 == 49 {
                        conn = Conn::open(addr);
                    }
                    n += 1;
                    conn.get(PROBE, Some(&key));
                    match conn.read_response(false) {
                        Ok(Some(r)) if r.status == 200 => ok += 1,
                        other => {
                            failures.push(format!("client {client}: {other:?}"));
                            conn = Conn::open(addr);
                        }
                    }
                    total.fetch_add(1, Ordering::Relaxed);
                }
                (ok, failures)
            })
        })
        .collect()
}

/// The served file is the operator's; the served bytes are the server's. Written in place
/// (`cp` over it, a writer that stops half-way), truncated, the server goes on answering
/// from the bytes it verified, logs and counts each refused reload, and `--watch` takes the
/// next good file.
#[test]
fn a_served_file_written_in_place_or_truncated_changes_nothing_served() {
    let dir = TempDir::new("inplace");
    // A large snapshot (the shipped real data) served first, so that a smaller file
    // written over it or a cut leaves most of its old length gone.
    let a = dir.real_snapshot("a.snap", str::to_owned);
    let b = dir.fixture_snapshot("b.snap");
    let live = dir.path("live.snap");
    publish(&a, &live);
    let (keys_path, keys) = dir.keys();
    // A data directory: every swap's events are computed from the old snapshot and the
    // new one, so the old one's bytes are read after the file changed.
    let owned = http_support::watching_args(&dir, &live, &keys_path, "data", &[]);
    let args: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut server = Binary::start(&args);
    let hash_a = server.hash();
    let key = keys["unlimited"].clone();
    let addr: std::net::SocketAddr = server.addr.parse().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let clients = probe_load(addr, &key, &stop, &total);
    let traffic = |n: u64| {
        let mark = total.load(Ordering::Relaxed);
        eventually("client traffic", || {
            total.load(Ordering::Relaxed) >= mark + n
        });
    };
    traffic(1_000);

    // `cp` over the served file: the same inode, rewritten in place with B.
    let status = Command::new("cp").arg(&b).arg(&live).status().unwrap();
    assert!(status.success());
    server.wait_for("reloaded: now serving");
    let hash_b = server.hash();
    assert_ne!(hash_b, hash_a, "--watch takes the good file cp wrote");
    traffic(2_000);

    // Cut to 4,096 bytes: refused, B keeps serving.
    let status = Command::new("truncate")
        .args(["-s", "4096"])
        .arg(&live)
        .status()
        .unwrap();
    assert!(status.success());
    let refused = server.wait_for("reload refused");
    assert!(refused.contains("truncated"), "{refused}");
    traffic(2_000);
    assert_eq!(server.hash(), hash_b);

    // A writer that stops half-way through A, in place: refused; then it finishes and
    // the file is A again, which --watch takes.
    let bytes_a = std::fs::read(&a).unwrap();
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&live).unwrap();
        f.set_len(0).unwrap();
        f.write_all(&bytes_a[..bytes_a.len() / 2]).unwrap();
        f.sync_all().unwrap();
        server.wait_for("reload refused");
        traffic(2_000);
        assert_eq!(server.hash(), hash_b);
        f.seek(std::io::SeekFrom::Start((bytes_a.len() / 2) as u64))
            .unwrap();
        f.write_all(&bytes_a[bytes_a.len() / 2..]).unwrap();
    }
    server.wait_for("reloaded: now serving");
    assert_eq!(server.hash(), hash_a);

    // Deleted, then replaced by rename: nothing to load, then the next good file.
    std::fs::remove_file(&live).unwrap();
    traffic(1_000);
    assert_eq!(server.hash(), hash_a);
    publish(&b, &live);
    server.wait_for("reloaded: now serving");
    assert_eq!(server.hash(), hash_b);
    traffic(2_000);
    stop.store(true, Ordering::Relaxed);

    let (mut ok, mut failures) = (0, Vec::new());
    for c in clients {
        let (o, f) = c.join().unwrap();
        ok += o;
        failures.extend(f);
    }
    eprintln!(
        "in-place test: {} requests across the faults, {} failed",
        ok + failures.len() as u64,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failed requests, first: {:?}",
        failures.len(),
        failures.first()
    );
    assert!(
        ok >= 10_000,
        "{ok} requests: fewer than the 10,000 asked for"
    );
    let metrics = server.get("/metrics", None).text();
    let counted = |result: &str| -> u64 {
        let needle = format!("tldsnap_snapshot_reloads_total{{result=\"{result}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(needle.as_str()))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {needle} in /metrics"))
    };
    assert!(counted("failure") >= 2, "refusals counted: {metrics}");
    assert!(counted("success") >= 3, "reloads counted: {metrics}");
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server died"
    );
}
