//! Helpers of the object-storage tests: a private `moto_server` (an S3-compatible
//! server, from PyPI) on a loopback port, and `tldsnap` processes pointed at it through
//! the AWS environment variables.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3Builder;
use tldsnap::remote::{Location, Remote};

use super::metering_support::{BIN, Dir, free_port, temp_dir};

/// Where to find `moto_server`: `$TLDSNAP_MOTO_SERVER`, the virtual environment that
/// `tools/moto-venv` makes under the target directory, then `PATH`.
fn moto_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TLDSNAP_MOTO_SERVER") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    // CARGO_TARGET_TMPDIR is TARGET/tmp.
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|t| t.join("moto-venv/bin/moto_server"));
    if let Some(p) = venv.filter(|p| p.is_file()) {
        return Some(p);
    }
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .map(|d| PathBuf::from(d).join("moto_server"))
        .find(|p| p.is_file())
}

/// A private moto server (S3 only is used), in memory: stopping it loses every bucket.
pub struct Moto {
    child: Option<Child>,
    bin: PathBuf,
    /// Its port (kept across [`Moto::restart`]).
    pub port: u16,
    /// Its log and a scratch directory.
    pub dir: Dir,
}

impl Moto {
    /// Starts moto on a free loopback port, or returns `None` (the test then passes with
    /// a printed note) when `moto_server` is not installed and `CI` is not set. With
    /// `CI` set, a missing moto fails the test.
    pub fn start(tag: &str) -> Option<Moto> {
        let Some(bin) = moto_binary() else {
            if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
                panic!(
                    "moto_server is not installed and CI is set: the object-storage tests must run \
                     (tools/moto-venv installs the pinned moto[server] under the target \
                     directory; .ci/run runs it)"
                );
            }
            eprintln!("note: moto_server not found; skipping the object-storage test {tag}");
            return None;
        };
        let mut m = Moto {
            child: None,
            bin,
            port: 0,
            dir: temp_dir(&format!("moto-{tag}")),
        };
        m.restart();
        Some(m)
    }

    /// Starts the server (again, on the same port when it had one; empty).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "moto is running");
        let log = self.dir.0.join("moto.log");
        let _ = std::fs::remove_file(&log);
        let child = Command::new(&self.bin)
            .args(["-H", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("moto log"))
            .spawn()
            .expect("start moto_server");
        self.child = Some(child);
        // It prints "Running on http://127.0.0.1:PORT" once listening (port 0: its own).
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(port) = text
                .split("Running on http://127.0.0.1:")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|p| p.parse::<u16>().ok())
            {
                self.port = port;
                break;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("moto_server exited ({status}): {text}");
            }
            assert!(
                Instant::now() < deadline,
                "moto_server did not start: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Listening is printed just before the socket accepts: wait for it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server does not accept");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (SIGKILL: the store simply goes away).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto accepts the unsigned request).
    pub fn create_bucket(&self, bucket: &str) {
        let (status, body) = request(
            ([127, 0, 0, 1], self.port).into(),
            "PUT",
            &format!("/{bucket}"),
        )
        .expect("moto answers");
        assert_eq!(status, 200, "create bucket {bucket}: {body}");
    }

    /// The AWS environment a `tldsnap` process needs to reach this server.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", "test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// The library's client for `url`, on this server (configured in code: the test
    /// process's environment is shared by every test thread).
    pub fn remote(&self, url: &str) -> Remote {
        tldsnap::remote::install_tls_provider();
        let location = Location::parse(url).expect("location");
        let store = AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .with_bucket_name(&location.bucket)
            .build()
            .expect("client");
        Remote::with_store(Arc::new(store), location)
    }

    /// An S3 client for raw writes (objects no `tldsnap` would write).
    pub fn raw(&self, bucket: &str) -> object_store::aws::AmazonS3 {
        tldsnap::remote::install_tls_provider();
        AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .with_bucket_name(bucket)
            .build()
            .expect("client")
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `tldsnap ARGS` with `env` (and no other AWS_ variable).
pub fn tldsnap(env: &[(String, String)], args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .output()
        .expect("run tldsnap")
}

/// A running `tldsnap serve`, its standard error kept in a file.
pub struct Serve {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    log: PathBuf,
}

impl Serve {
    /// Starts `tldsnap serve --addr 127.0.0.1:FREE ARGS` with `env`; waits until
    /// `/healthz` answers 200 (not `/readyz`: a replica may start not ready).
    pub fn start(env: &[(String, String)], args: &[&str], log: PathBuf) -> Serve {
        let addr: SocketAddr = ([127, 0, 0, 1], free_port()).into();
        let mut cmd = Command::new(BIN);
        for (k, _) in std::env::vars() {
            if k.starts_with("AWS_") {
                cmd.env_remove(k);
            }
        }
        let child = cmd
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("start tldsnap serve");
        let mut s = Serve { child, addr, log };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("serve exited early ({status}): {}", s.log());
            }
            if s.get("/healthz").is_some_and(|(st, _)| st == 200) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "serve did not answer: {}",
                s.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `GET path`: status and body.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        request(self.addr, "GET", path)
    }

    /// `/readyz` as JSON, when it answers 200.
    pub fn ready(&self) -> Option<serde_json::Value> {
        let (status, body) = self.get("/readyz")?;
        (status == 200).then(|| serde_json::from_str(&body).expect("readyz JSON"))
    }

    /// `source.state` of `/readyz`, when ready.
    pub fn state(&self) -> Option<String> {
        self.ready()
            .and_then(|v| v["source"]["state"].as_str().map(str::to_owned))
    }

    /// The hash `/readyz` reports, when ready.
    pub fn hash(&self) -> Option<String> {
        self.ready()
            .and_then(|v| v["snapshot"]["hash"].as_str().map(str::to_owned))
    }

    /// The value of one series line of `/metrics` (`name{labels}` exactly).
    pub fn metric(&self, series: &str) -> Option<f64> {
        let (_, text) = self.get("/metrics")?;
        text.lines().find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
                .and_then(|v| v.parse().ok())
        })
    }

    /// What it wrote to standard error so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends a signal (`HUP`, `TERM`) with kill(1).
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success());
    }

    /// SIGTERM, and the process must exit 0.
    pub fn terminate(mut self) {
        self.signal("TERM");
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "clean shutdown exits 0, got {status}");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `cond` every 50 ms for at most `secs` seconds; true once it held.
pub fn eventually(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One HTTP/1.1 request on its own connection: status and body.
pub fn request(addr: SocketAddr, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).ok()?;
    let text = String::from_utf8_lossy(&resp);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    // The servers here answer with Content-Length (no chunked bodies to decode).
    Some((status, body.to_owned()))
}

/// A snapshot built from the fixture source, with `edit` applied to prices.csv.
pub fn snapshot(dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    let src = dir.join(format!("{name}.source"));
    std::fs::create_dir_all(&src).expect("source dir");
    for file in ["registrars.csv", "prices.csv", "history.csv", "tlds.csv"] {
        let text = std::fs::read_to_string(fixture.join(file)).expect("fixture");
        let text = if file == "prices.csv" {
            edit(&text)
        } else {
            text
        };
        std::fs::write(src.join(file), text).expect("write");
    }
    let out = dir.join(name);
    tldsnap::build::build_dir(&src, &out, &tldsnap::build::BuildOptions::default())
        .expect("builds");
    out
}

/// The content hash of a snapshot file.
pub fn hash_of(path: &Path) -> String {
    tldsnap::snapshot::Snapshot::open(path)
        .expect("opens")
        .header()
        .hash_hex()
}
