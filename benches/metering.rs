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
//! `admission/one_key` and `admission/10000_keys` are the serving thread's path with the
//! embedded store (`Access::admit_now`, then `Access::spend_now`), each request on the
//! next of 64 connections' key caches, as `tools/loadtest`'s key-population scenario
//! sends them: one key that every connection's cache holds, or 10,000 keys in turn, so
//! every request misses its connection's cache (the key hashed, looked up, its meter
//! read from memory no cache holds). Their difference is what a realistic key population
//! costs a request (issue 20: "10,000 keys within 5% of one key").
//!
//! `cargo bench --bench metering`; `TLDSNAP_BENCH_CLOCK=cpu cargo bench --bench metering`
//! reports the CPU time this process spent per request instead of the elapsed time (all
//! its threads, `CLOCK_PROCESS_CPUTIME_ID`; Redis's own time is not in it). On
//! a machine busy with other work the elapsed time mostly measures the waits for a core
//! (for this process and for Redis); the CPU time is what bounds a busy server's
//! throughput, and other work moves it much less.

use std::hint::black_box;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use tldsnap::access::clock::SystemClock;
use tldsnap::access::keys::KeysFile;
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig, KeyCache};

const PLANS: &str = r#"{
 "basic": {"credits_per_month": 1000, "rate_per_second": 1000000, "burst": 1000000,
           "tlds": "all", "registrar_list_limit": 5},
 "enterprise": {"credits_per_month": 1000000, "rate_per_second": 1000000, "burst": 1000000,
                "tlds": "all", "registrar_list_limit": null},
 "loadtest": {"credits_per_month": null, "rate_per_second": null, "burst": null,
              "tlds": "all", "registrar_list_limit": null}}"#;

/// Nanoseconds of CPU time used so far by all of this process's threads
/// (`CLOCK_PROCESS_CPUTIME_ID`, exact to the call), or `None` where there is no such clock.
fn cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call, which is
    // all clock_gettime requires; it keeps no pointer to it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// What a measurement counts: elapsed time, or this process's CPU time.
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    Cpu,
}

/// A started measurement.
struct Started(Clock, Instant, u64);

impl Clock {
    fn from_env() -> Clock {
        match std::env::var("TLDSNAP_BENCH_CLOCK").as_deref() {
            Ok("cpu") if cpu_ns().is_some() => Clock::Cpu,
            Ok("cpu") => panic!("TLDSNAP_BENCH_CLOCK=cpu needs CLOCK_PROCESS_CPUTIME_ID"),
            _ => Clock::Wall,
        }
    }

    fn start(self) -> Started {
        Started(self, Instant::now(), cpu_ns().unwrap_or(0))
    }
}

impl Started {
    fn elapsed(&self) -> Duration {
        match self.0 {
            Clock::Wall => self.1.elapsed(),
            Clock::Cpu => Duration::from_nanos(cpu_ns().unwrap_or(0).saturating_sub(self.2)),
        }
    }
}

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
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        client
            .get_connection_with_timeout(Duration::from_secs(2))
            .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con))
            .is_ok_and(|pong| pong == "PONG")
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

/// One case: an `Access` and its keys, sent in turn by one caller or by 64.
struct Case {
    name: &'static str,
    access: Arc<Access>,
    raws: Arc<Vec<Vec<u8>>>,
    callers: usize,
    /// Requests sent so far (where the next one starts in the keys).
    sent: usize,
}

impl Case {
    /// Sends `n` requests; returns what `clock` measured, per request times `n`.
    fn run(&mut self, rt: &tokio::runtime::Runtime, clock: Clock, n: u64) -> Duration {
        let per = (n as usize).div_ceil(self.callers);
        let first = self.sent;
        self.sent += per * self.callers;
        rt.block_on(async {
            let start = clock.start();
            if self.callers == 1 {
                for i in 0..per {
                    request(&self.access, &self.raws[(first + i) % self.raws.len()]).await;
                }
            } else {
                let tasks: Vec<_> = (0..self.callers)
                    .map(|t| {
                        let (a, raws, callers) =
                            (self.access.clone(), self.raws.clone(), self.callers);
                        tokio::spawn(async move {
                            for i in 0..per {
                                let k = (first + t + i * callers) % raws.len();
                                request(&a, &raws[k]).await;
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }
            // Per request over all callers, times the n asked for.
            start
                .elapsed()
                .mul_f64(n as f64 / (per * self.callers) as f64)
        })
    }
}

/// The cases, in the order they run.
const CASES: [&str; 4] = [
    "embedded",
    "redis_basic",
    "redis_enterprise",
    "redis_basic_64_callers",
];

/// Sets up one case (its keys, its `Access`); `None` for a Redis case without Redis.
/// Each case is made just before it runs and shut down after, so no other case's
/// background task runs beside it.
fn case(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    redis: Option<&Redis>,
    name: &'static str,
) -> Option<Case> {
    let (plan, n, callers, store) = match name {
        "embedded" => ("enterprise", 1000, 1, None),
        "redis_basic" => ("basic", 1000, 1, Some(redis?.url())),
        "redis_enterprise" => ("enterprise", 1000, 1, Some(redis?.url())),
        _ => ("basic", 2000, 64, Some(redis?.url())),
    };
    let (path, raws) = keys(dir, name, plan, n);
    Some(Case {
        name,
        access: access(rt, &path, store),
        raws: Arc::new(raws),
        callers,
        sent: 0,
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tldsnap-bench-metering-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Connections whose key caches the admission cases use in turn.
const CONNECTIONS: usize = 64;

/// The admission cases: `Access::admit_now` and `Access::spend_now` on one key or on
/// 10,000 in turn, each request on the next connection's key cache.
fn admission(c: &mut Criterion, rt: &tokio::runtime::Runtime, dir: &Path) {
    for (name, n) in [("one_key", 1), ("10000_keys", 10_000)] {
        // tools/loadtest.d/plans.json's `enterprise`, which the key-population scenario's
        // keys are on: no rate or credit limit (a refusal panics), credits still counted.
        let (path, raws) = keys(dir, &format!("admission-{name}"), "loadtest", n);
        let a = access(rt, &path, None);
        let mut caches: Vec<KeyCache> = (0..CONNECTIONS).map(|_| KeyCache::default()).collect();
        let mut sent = 0usize;
        c.bench_function(&format!("admission/{name}"), |b| {
            b.iter(|| {
                let raw = &raws[sent % raws.len()];
                let cache = &mut caches[sent % CONNECTIONS];
                sent += 1;
                let mut caller = a.admit_now(Some((raw, cache)), client(), true).unwrap();
                a.spend_now(&mut caller, 1).unwrap().unwrap();
                black_box(caller.headers)
            })
        });
        rt.block_on(a.shutdown()).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let clock = Clock::from_env();
    let dir = temp_dir();
    let redis = Redis::start(&dir);
    if redis.is_none() {
        eprintln!("note: redis-server not found; only metering/embedded runs");
    }
    for mut case in CASES
        .iter()
        .filter_map(|name| case(&rt, &dir, redis.as_ref(), name))
    {
        c.bench_function(&format!("metering/{}", case.name), |b| {
            b.iter_custom(|iters| case.run(&rt, clock, iters))
        });
        rt.block_on(case.access.shutdown()).unwrap();
    }
    admission(c, &rt, &dir);
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `TLDSNAP_BENCH_REQUESTS=N`: no criterion; each case (or only `TLDSNAP_BENCH_CASE`)
/// sends 1,000 requests, then N measured ones, and prints the CPU and elapsed time per
/// request. With a fixed N the work is the same in every run, which is what an
/// instruction count needs (`valgrind --tool=callgrind`, two values of N: the
/// difference over the difference of N is per request, the set-up cancels out).
fn fixed(n: u64) {
    let only = std::env::var("TLDSNAP_BENCH_CASE").ok();
    let rt = runtime();
    let dir = temp_dir();
    let redis = Redis::start(&dir);
    if redis.is_none() {
        eprintln!("note: redis-server not found; only embedded runs");
    }
    for mut case in CASES
        .iter()
        .filter(|name| only.as_deref().is_none_or(|o| o == **name))
        .filter_map(|name| case(&rt, &dir, redis.as_ref(), name))
    {
        case.run(&rt, Clock::Wall, 1000);
        let cpu = case.run(&rt, Clock::Cpu, n);
        let wall = case.run(&rt, Clock::Wall, n);
        let per = |d: Duration| d.as_nanos() as f64 / n.max(1) as f64;
        println!(
            "{:<24} {n} requests: {:>9.0} ns CPU, {:>9.0} ns elapsed per request",
            case.name,
            per(cpu),
            per(wall)
        );
        rt.block_on(case.access.shutdown()).unwrap();
    }
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5));
    targets = bench
}

fn main() {
    match std::env::var("TLDSNAP_BENCH_REQUESTS") {
        Ok(n) => fixed(n.parse().expect("TLDSNAP_BENCH_REQUESTS: a number")),
        Err(_) => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
