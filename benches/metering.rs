//! The metering path (`Access::admit` + `Access::spend`, what every keyed request costs
//! before its answer), with the embedded store and with credits in Redis
//! (`docs/METERING.md`, "Cost on the request path").
//!
//! - `embedded`: keyed, counts in memory (the reference: no I/O).
//! - `redis_basic`: a basic-size key (1,000 credits): every request asks Redis (a lease of
//!   one credit, the `GRAB` script).
//! - `redis_enterprise`: an enterprise-size key (1,000,000 credits): leases of up to 1,000
//!   credits, so Redis is asked about once per thousand requests.
//! - `redis_basic_64_callers`: 64 concurrent callers on basic-size keys on a two-worker
//!   runtime: what one connection to Redis carries when callers overlap (pipelining);
//!   the figure is the time per request over all callers.
//!
//! Each case runs over its own 1,000 keys in turn (2,000 for the concurrent case), as
//! the server sees them, against a private `redis-server` started on a free loopback
//! port (no persistence). Rates are lifted (a million per second per key, so the rate
//! word is still checked) and the system clock is used. Without `redis-server` only
//! `embedded` runs.
//!
//! `cargo bench --bench metering`.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tldsnap::access::clock::SystemClock;
use tldsnap::access::keys::KeysFile;
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig};

const PLANS: &str = r#"{
 "basic": {"credits_per_month": 1000, "rate_per_second": 1000000, "burst": 1000000,
           "tlds": "all", "registrar_list_limit": 5},
 "enterprise": {"credits_per_month": 1000000, "rate_per_second": 1000000, "burst": 1000000,
                "tlds": "all", "registrar_list_limit": null}}"#;

/// A private redis-server on a free loopback port, killed on drop.
struct Redis {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Redis {
    fn start(dir: &Path) -> Option<Redis> {
        let bin = std::env::var("PATH")
            .unwrap_or_default()
            .split(':')
            .map(|d| PathBuf::from(d).join("redis-server"))
            .chain([PathBuf::from("/usr/bin/redis-server")])
            .find(|p| p.is_file())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir).ok()?;
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let r = Redis { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !r.ping() {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(r)
    }

    fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `n` new keys on `plan` in their own keys file; returns the file and the raw keys.
fn keys(dir: &Path, name: &str, plan: &str, n: usize) -> (PathBuf, Vec<Vec<u8>>) {
    let path = dir.join(format!("{name}.json"));
    let mut f = KeysFile::default();
    let raws = (0..n)
        .map(|_| f.add(plan, "").unwrap().0.into_bytes())
        .collect();
    f.save(&path).unwrap();
    (path, raws)
}

fn access(rt: &tokio::runtime::Runtime, keys: &Path, store: Option<String>) -> Arc<Access> {
    let a = rt
        .block_on(Access::new(AccessConfig {
            plans: Plans::from_json(PLANS).unwrap(),
            keys_path: Some(keys.to_path_buf()),
            data_dir: None,
            usage_store: store,
            clock: Arc::new(SystemClock),
        }))
        .unwrap();
    if a.usage_store_healthy() == Some(false) {
        panic!("the usage store did not answer");
    }
    Arc::new(a)
}

fn client() -> IpAddr {
    "192.0.2.1".parse().unwrap()
}

/// One keyed request's metering: admit, then one credit. Panics on a refusal: every
/// case has credits and rate enough for the whole run.
async fn request(a: &Access, raw: &[u8]) {
    let mut c = a.admit(Some(raw), client(), true).await.unwrap();
    a.spend(&mut c).await.unwrap();
    black_box(c.headers);
}

/// Sequential requests over `raws` in turn.
fn sequential(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    a: &Access,
    raws: &[Vec<u8>],
) {
    let mut next = 0usize;
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    request(a, &raws[next % raws.len()]).await;
                    next += 1;
                }
                start.elapsed()
            })
        })
    });
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("tldsnap-bench-metering-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let (path, raws) = keys(&dir, "embedded", "enterprise", 1000);
    let a = access(&rt, &path, None);
    sequential(c, &rt, "metering/embedded", &a, &raws);
    rt.block_on(a.shutdown()).unwrap();

    match Redis::start(&dir) {
        None => eprintln!("note: redis-server not found; only metering/embedded ran"),
        Some(redis) => {
            for (name, plan) in [("redis_basic", "basic"), ("redis_enterprise", "enterprise")] {
                let (path, raws) = keys(&dir, name, plan, 1000);
                let a = access(&rt, &path, Some(redis.url()));
                sequential(c, &rt, &format!("metering/{name}"), &a, &raws);
                rt.block_on(a.shutdown()).unwrap();
            }
            let (path, raws) = keys(&dir, "concurrent", "basic", 2000);
            let raws = Arc::new(raws);
            let a = access(&rt, &path, Some(redis.url()));
            let mut round = 0usize;
            c.bench_function("metering/redis_basic_64_callers", |b| {
                b.iter_custom(|iters| {
                    round += 1;
                    let per = iters.div_ceil(64);
                    rt.block_on(async {
                        let start = Instant::now();
                        let tasks: Vec<_> = (0..64usize)
                            .map(|t| {
                                let (a, raws) = (a.clone(), raws.clone());
                                let first = round * 64 + t;
                                tokio::spawn(async move {
                                    for i in 0..per as usize {
                                        let k = (first + i * 64) % raws.len();
                                        request(&a, &raws[k]).await;
                                    }
                                })
                            })
                            .collect();
                        for t in tasks {
                            t.await.unwrap();
                        }
                        // Time per request over all callers.
                        start.elapsed().mul_f64(iters as f64 / (per * 64) as f64)
                    })
                })
            });
            rt.block_on(a.shutdown()).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
