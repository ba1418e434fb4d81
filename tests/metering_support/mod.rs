//! Helpers shared by the metering tests: temporary directories, a private `redis-server`,
//! and the real `tldsnap serve` binary driven over a socket.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

/// A temporary directory, removed when dropped.
pub struct Dir(pub PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new empty temporary directory named after `tag`.
pub fn temp_dir(tag: &str) -> Dir {
    let mut r = [0u8; 6];
    getrandom::fill(&mut r).unwrap();
    let p = std::env::temp_dir().join(format!(
        "tldsnap-{tag}-{}-{}",
        std::process::id(),
        r.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::create_dir_all(&p).unwrap();
    Dir(p)
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `tldsnap ARGS`, asserts success, returns standard output.
pub fn run_ok<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "tldsnap {:?}: {}",
        args.iter()
            .map(|a| a.as_ref().to_owned())
            .collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes a two-registrar price source under `dir` and builds its snapshot.
pub fn snapshot(dir: &Path) -> PathBuf {
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
    snap
}

/// Adds a key on `plan` to the keys file with the real CLI; returns the raw key.
pub fn add_key(keys: &Path, plan: &str, extra: &[&str]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "keys".as_ref(),
        "add".as_ref(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--plan".as_ref(),
        plan.as_ref(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    run_ok(&args).trim().to_string()
}

/// A private `redis-server` on a free loopback port, without persistence unless started
/// with [`Redis::start_persistent`].
pub struct Redis {
    child: Option<Child>,
    persistent: bool,
    /// Its port.
    pub port: u16,
    /// Its working directory (also a convenient place for test files).
    pub dir: Dir,
    /// `--requirepass`, when the server asks for one.
    password: Option<String>,
}

fn redis_binary() -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/bin", "/usr/sbin", "/usr/local/bin"])
        .map(|d| PathBuf::from(d).join("redis-server"))
        .find(|p| p.is_file())
}

/// Whether a redis-server answers on `port` (through the `redis` crate, like the code
/// under test). A server that wants a password refuses PING with NOAUTH: up all the same.
fn ping(port: u16) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else {
        return false;
    };
    let Ok(mut con) = client.get_connection_with_timeout(Duration::from_secs(2)) else {
        return false;
    };
    let _ = con.set_read_timeout(Some(Duration::from_secs(2)));
    match redis::cmd("PING").query::<String>(&mut con) {
        Ok(pong) => pong == "PONG",
        Err(e) => e.code() == Some("NOAUTH"),
    }
}

impl Redis {
    /// Starts a private redis-server, or returns `None` (the test then passes with a
    /// printed note) when there is none and `CI` is not set. With `CI` set, a missing
    /// redis-server fails the test.
    pub fn start(tag: &str) -> Option<Redis> {
        Redis::start_with(tag, false, None)
    }

    /// Like [`Redis::start`], with an append-only file fsynced at every write: a
    /// restart (or a kill and a restart) keeps the data, as docs/DEPLOY.md asks of a
    /// Redis that holds credits.
    pub fn start_persistent(tag: &str) -> Option<Redis> {
        Redis::start_with(tag, true, None)
    }

    /// Like [`Redis::start`], for a server that requires `password` (`--requirepass`,
    /// the `default` user's password).
    pub fn start_with_password(tag: &str, password: &str) -> Option<Redis> {
        Redis::start_with(tag, false, Some(password.to_owned()))
    }

    fn start_with(tag: &str, persistent: bool, password: Option<String>) -> Option<Redis> {
        if redis_binary().is_none() {
            if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
                panic!(
                    "redis-server is not installed and CI is set: the Redis metering tests must run"
                );
            }
            eprintln!("note: redis-server not found; skipping the Redis metering test {tag}");
            return None;
        }
        let mut r = Redis {
            child: None,
            persistent,
            port: free_port(),
            dir: temp_dir(&format!("redis-{tag}")),
            password,
        };
        r.restart();
        Some(r)
    }

    /// Starts the server again on the same port (empty unless persistent).
    pub fn restart(&mut self) {
        let aof: &[&str] = if self.persistent {
            &["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            &["--appendonly", "no"]
        };
        let child = Command::new(redis_binary().unwrap())
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(aof)
            .args(
                self.password
                    .iter()
                    .flat_map(|p| ["--requirepass", p.as_str()]),
            )
            .arg("--dir")
            .arg(&self.dir.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ping(self.port) {
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// `redis://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `keys list --usage-store` as the operator sees it: this month's usage of the first
/// key in the keys file, summed over every replica's field.
pub fn used_in_redis(keys: &Path, plans: &Path, url: &str) -> u64 {
    let table = run_ok(&[
        "keys".as_ref(),
        "list".as_ref(),
        "--keys".as_ref(),
        keys.as_os_str(),
        "--plans".as_ref(),
        plans.as_os_str(),
        "--usage-store".as_ref(),
        url.as_ref(),
    ]);
    let row = table.lines().nth(1).expect(&table);
    let cols: Vec<&str> = row.split_whitespace().collect();
    cols[cols.len() - 2].parse().expect(&table)
}

/// A running `tldsnap serve`.
pub struct Server {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// One HTTP answer: status and `X-Credits-Remaining`.
pub type Answer = (u16, Option<u64>);

/// The client endpoint the metering tests call.
pub const CHEAPEST: &str = "/api/v1/client/prices/cheapest?tlds=com";

impl Server {
    /// Starts `tldsnap serve --addr 127.0.0.1:FREE ARGS` and waits until `/healthz` is 200.
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Server {
        Server::start_with_stderr(args, Stdio::null())
    }

    /// [`Server::start`] with its standard error sent to `stderr` (`Stdio::piped()`: the
    /// log lines are then read from `child.stderr`).
    pub fn start_with_stderr<S: AsRef<std::ffi::OsStr>>(args: &[S], stderr: Stdio) -> Server {
        let addr: SocketAddr = ([127, 0, 0, 1], free_port()).into();
        let child = Command::new(BIN)
            .arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr)
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

    /// One request on its own connection.
    pub fn get(&self, path: &str, key: Option<&str>) -> Option<Answer> {
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

    /// A request that must succeed; returns `X-Credits-Remaining`.
    pub fn spend(&self, key: &str) -> u64 {
        let (status, credits) = self.get(CHEAPEST, Some(key)).expect("an answer");
        assert_eq!(status, 200);
        credits.expect("X-Credits-Remaining")
    }

    /// Sends a signal (`TERM`, `HUP`) with kill(1).
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// SIGTERM, and the process must exit 0.
    pub fn terminate(mut self) {
        self.signal("TERM");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "clean shutdown exits 0, got {status}");
    }

    /// SIGKILL.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
