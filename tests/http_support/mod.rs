//! Shared by the `tests/http*.rs` suites: a fixture snapshot, a keys file, the real
//! server in-process on `127.0.0.1:0`, and a hand-written HTTP/1.1 client over a plain
//! `std::net::TcpStream` (so tests can also send bytes no client library would).
#![allow(dead_code)]

pub mod receiver;
pub mod sse;

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tldsnap::access::clock::ManualClock;
use tldsnap::access::keys::KeysFile;
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig};
use tldsnap::api::{Config, State};
use tldsnap::build::{BuildOptions, build_dir};
use tldsnap::events::EventLog;
use tldsnap::events::log::DEFAULT_RETENTION_MS;
use tldsnap::http::server::{self, run};
use tldsnap::store::{Store, SwapObserver};
use tldsnap::webhooks::Webhooks;

/// 2026-11-21T12:00:00Z, where the manual clock starts.
pub const T0_MS: i64 = 1_795_262_400_000;

/// The plans every suite uses: the defaults, plus `unlimited` (no rate limit, no credit
/// limit, every TLD, full listings) for tests that send many requests, and `tiny` (two
/// credits) for the credits test.
pub const TEST_PLANS: &str = r#"{
  "unlimited": {"credits_per_month": null, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": null},
  "tiny": {"credits_per_month": 2, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": 5}
}"#;

/// Like [`TEST_PLANS`], with unkeyed public calls unlimited too (for suites that send
/// hundreds of requests from one address).
pub const TEST_PLANS_OPEN_PUBLIC: &str = r#"{
  "unlimited": {"credits_per_month": null, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": null},
  "tiny": {"credits_per_month": 2, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": 5},
  "public": {"credits_per_month": null, "rate_per_second": null, "burst": null, "tlds": "free", "registrar_list_limit": 5}
}"#;

/// The plans a key is made for, in this order, by [`TempDir::keys`].
pub const KEY_PLANS: [&str; 6] = ["free", "basic", "pro", "enterprise", "unlimited", "tiny"];

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory under the system's temp dir.
    pub fn new(tag: &str) -> TempDir {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).unwrap();
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p =
            std::env::temp_dir().join(format!("tldsnap-http-{tag}-{}-{hex}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Builds the fixture price source (tests/fixtures/source) into `name`.
    pub fn fixture_snapshot(&self, name: &str) -> PathBuf {
        let out = self.path(name);
        build_dir(&fixture_source(), &out, &BuildOptions::default()).unwrap();
        out
    }

    /// Builds a copy of the fixture source with `edit` applied to prices.csv into `name`.
    pub fn edited_snapshot(&self, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
        let src = self.path(&format!("{name}.source"));
        std::fs::create_dir_all(&src).unwrap();
        for file in ["registrars.csv", "prices.csv", "history.csv", "tlds.csv"] {
            let text = std::fs::read_to_string(fixture_source().join(file)).unwrap();
            let text = if file == "prices.csv" {
                edit(&text)
            } else {
                text
            };
            std::fs::write(src.join(file), text).unwrap();
        }
        let out = self.path(name);
        build_dir(&src, &out, &BuildOptions::default()).unwrap();
        out
    }

    /// Builds a copy of the fixture source with `edit(file name, text)` applied to every
    /// file of it (registrars.csv, prices.csv, history.csv, tlds.csv) into `name`.
    pub fn edited_source_snapshot(
        &self,
        name: &str,
        edit: impl Fn(&str, &str) -> String,
    ) -> PathBuf {
        let src = self.path(&format!("{name}.source"));
        std::fs::create_dir_all(&src).unwrap();
        for file in ["registrars.csv", "prices.csv", "history.csv", "tlds.csv"] {
            let text = std::fs::read_to_string(fixture_source().join(file)).unwrap();
            std::fs::write(src.join(file), edit(file, &text)).unwrap();
        }
        let out = self.path(name);
        build_dir(&src, &out, &BuildOptions::default()).unwrap();
        out
    }

    /// The shipped real data (snapshots/source), with `edit` applied to its prices.csv,
    /// built into `name`.
    pub fn real_snapshot(&self, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/source");
        let src = self.path(&format!("{name}.source"));
        std::fs::create_dir_all(&src).unwrap();
        for entry in std::fs::read_dir(&shipped).unwrap() {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let text = if entry.file_name() == "prices.csv" {
                edit(&text)
            } else {
                text
            };
            std::fs::write(src.join(entry.file_name()), text).unwrap();
        }
        let out = self.path(name);
        build_dir(&src, &out, &BuildOptions::default()).unwrap();
        out
    }

    /// Writes a keys file with one key per plan of [`KEY_PLANS`]; returns plan → raw key.
    pub fn keys(&self) -> (PathBuf, BTreeMap<&'static str, String>) {
        let path = self.path("keys.json");
        let mut file = KeysFile::default();
        let mut raw = BTreeMap::new();
        for plan in KEY_PLANS {
            raw.insert(plan, file.add(plan, &format!("{plan} test key")).unwrap().0);
        }
        file.save(&path).unwrap();
        (path, raw)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The edit of the fixture's prices.csv (tests/fixtures/source) that the event suites
/// swap to: delta's .com register price 8.88 → 10.88 (delta was the cheapest: charlie
/// is now), bravo's .net row removed, alpha adds .de at 5.00 (cheaper than echo's 6.00).
pub fn fixture_edit(prices: &str) -> String {
    let mut out = prices
        .replace("com,delta,8.88,15.00,8.88", "com,delta,10.88,15.00,8.88")
        .replace("net,bravo,12.34,12.34,12.34,USD,2025-10-25T00:00:00Z\n", "");
    out.push_str("de,alpha,5.00,7.00,,USD,2026-10-01T00:00:00Z\n");
    out
}

/// (type, TLD, registrar) of the events of [`fixture_edit`], in log order.
pub const FIXTURE_EVENTS: [(&str, &str, &str); 5] = [
    ("price.changed", "com", "delta"),
    ("ranking.changed", "com", "charlie"),
    ("offer.added", "de", "alpha"),
    ("ranking.changed", "de", "alpha"),
    ("offer.removed", "net", "bravo"),
];

/// The edit of the shipped real data's prices.csv that the real-data event suites swap
/// to: Spaceship's .com register price 9.08 → 9.58 (a price change), DreamHost's .net
/// 4.99 → 10.99 (the cheapest made dearer: Cloudflare is now), Sav's .io row removed
/// (Porkbun is the cheapest now), NIRA adds .org at 6.50 (the new cheapest).
pub fn real_data_edit(prices: &str) -> String {
    let replace = |text: String, from: &str, to: &str| {
        assert!(text.contains(from), "{from}");
        text.replace(from, to)
    };
    let mut p = prices.to_owned();
    p = replace(
        p,
        "\ncom,spaceship,9.08,10.18,",
        "\ncom,spaceship,9.58,10.18,",
    );
    p = replace(
        p,
        "\nnet,dreamhost,4.99,19.99,",
        "\nnet,dreamhost,10.99,19.99,",
    );
    // io at Sav removed: its whole line.
    let io_sav = "\nio,sav,26.99,51.99,,USD,2026-08-16T00:00:00.000Z,";
    let at = p.find(io_sav).expect(io_sav);
    let end = at + 1 + p[at + 1..].find('\n').unwrap();
    p.replace_range(at..end, "");
    // org at NIRA added, every optional column empty.
    let columns = p.lines().next().unwrap().split(',').count();
    p.push_str("org,nira,6.50,6.50,,USD,2026-11-01T00:00:00.000Z");
    p.push_str(&",".repeat(columns - 7));
    p.push('\n');
    p
}

/// The events of [`real_data_edit`] swapped in after the shipped data, in log order:
/// (id, type, TLD, registrar).
pub const REAL_DATA_EVENTS: [(u64, &str, &str, &str); 7] = [
    (1, "price.changed", "com", "spaceship"),
    (2, "offer.removed", "io", "sav"),
    (3, "ranking.changed", "io", "porkbun"),
    (4, "price.changed", "net", "dreamhost"),
    (5, "ranking.changed", "net", "cloudflare"),
    (6, "offer.added", "org", "nira"),
    (7, "ranking.changed", "org", "nira"),
];

/// The fixture price source.
pub fn fixture_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source")
}

/// Puts `from`'s bytes at `to` the way a snapshot must be replaced: a new file renamed
/// over the old one (never rewritten in place under the server's memory map).
pub fn publish(from: &Path, to: &Path) {
    let tmp = to.with_extension("incoming");
    std::fs::copy(from, &tmp).unwrap();
    std::fs::rename(&tmp, to).unwrap();
}

/// Like [`publish`], with raw bytes.
pub fn publish_bytes(bytes: &[u8], to: &Path) {
    let tmp = to.with_extension("incoming");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, to).unwrap();
}

/// What a test server is made of.
pub struct Options {
    /// Snapshot file (reloadable), or `None` with `empty: false` for... see `empty`.
    pub snapshot: Option<PathBuf>,
    /// Start with nothing loaded (`/readyz` 503).
    pub empty: bool,
    /// Keys file.
    pub keys: Option<PathBuf>,
    /// Plans JSON.
    pub plans: &'static str,
    /// Request-handling settings.
    pub config: Config,
    /// Connection settings.
    pub server: server::Config,
    /// Data directory: when given, the server keeps the price-change event log there
    /// (with the manual clock) and serves the event endpoints, and runs webhooks (on
    /// the system clock, which signatures are checked against; private targets and
    /// `http://` allowed, for receivers on 127.0.0.1).
    pub data_dir: Option<PathBuf>,
    /// The webhook retry schedule (default: at once, 100 ms, 200 ms).
    pub webhook_schedule: Vec<Duration>,
    /// `--allow-private-webhooks` (default true: receivers on 127.0.0.1).
    pub webhooks_allow_private: bool,
    /// Live lookups (`serve --live`): when given, the server makes them with this
    /// configuration.
    pub live: Option<tldsnap::live::Config>,
}

impl Options {
    /// Serve `snapshot` with `keys`, [`TEST_PLANS`] and the default config, but for an
    /// age limit of 100 years: the fixture's prices count as fresh unless a test sets
    /// `config.max_age_days` (the staleness tests do).
    pub fn new(snapshot: &Path, keys: &Path) -> Options {
        Options {
            snapshot: Some(snapshot.to_path_buf()),
            empty: false,
            keys: Some(keys.to_path_buf()),
            plans: TEST_PLANS,
            config: Config {
                public_url: "https://tldsnap.test".to_owned(),
                max_age_days: tldsnap::query::MAX_AGE_DAYS_LIMIT,
                ..Config::default()
            },
            server: server::Config::default(),
            data_dir: None,
            webhook_schedule: vec![
                Duration::ZERO,
                Duration::from_millis(100),
                Duration::from_millis(200),
            ],
            webhooks_allow_private: true,
            live: None,
        }
    }
}

/// The real server, in-process, on its own runtime thread.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (store, access, metrics).
    pub state: Arc<State>,
    /// The clock access reads.
    pub clock: Arc<ManualClock>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl Server {
    /// Starts a server; returns once it accepts connections.
    pub fn start(opts: Options) -> Server {
        let clock = Arc::new(ManualClock::new(T0_MS));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let clock2 = Arc::clone(&clock);
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let store = match (&opts.snapshot, opts.empty) {
                    (_, true) => Store::empty(opts.snapshot.clone()),
                    (Some(path), false) => Store::open(path.clone()).unwrap(),
                    (None, false) => {
                        Store::with_snapshot(tldsnap::build::default_snapshot().unwrap(), None)
                    }
                };
                let events = opts.data_dir.as_ref().map(|dir| {
                    let clock = Arc::clone(&clock2) as Arc<dyn tldsnap::access::clock::Clock>;
                    Arc::new(EventLog::open(dir, DEFAULT_RETENTION_MS, clock).unwrap())
                });
                let store = Arc::new(match &events {
                    Some(log) => store.observed(Arc::clone(log) as Arc<dyn SwapObserver>),
                    None => store,
                });
                let access = Arc::new(
                    Access::new(AccessConfig {
                        plans: Plans::from_json(opts.plans).unwrap(),
                        keys_path: opts.keys.clone(),
                        data_dir: None,
                        usage_store: None,
                        clock: clock2,
                    })
                    .await
                    .unwrap(),
                );
                let hooks = match (&events, &opts.data_dir) {
                    (Some(log), Some(dir)) => {
                        let config = tldsnap::webhooks::Config {
                            data_dir: dir.clone(),
                            sender: tldsnap::webhooks::Sender::new(opts.webhooks_allow_private),
                            schedule: opts.webhook_schedule.clone(),
                            owner_check: tldsnap::api::webhooks::owner_check(Arc::clone(&access)),
                        };
                        let clock = Arc::new(tldsnap::access::clock::SystemClock);
                        let hooks = Webhooks::open(config, Arc::clone(log), clock).unwrap();
                        Some(Arc::new(hooks))
                    }
                    _ => None,
                };
                let state = State::new(store, access, opts.config);
                let state = match events {
                    Some(log) => state.with_events(log),
                    None => state,
                };
                let state = match opts.live {
                    Some(config) => {
                        state.with_live(Arc::new(tldsnap::live::Live::new(config).unwrap()))
                    }
                    None => state,
                };
                let state = Arc::new(match &hooks {
                    Some(hooks) => {
                        hooks.start();
                        state.with_webhooks(Arc::clone(hooks))
                    }
                    None => state,
                });
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx
                    .send((listener.local_addr().unwrap(), Arc::clone(&state)))
                    .unwrap();
                let served = run(listener, state, opts.server, async {
                    let _ = stopped.await;
                })
                .await;
                if let Some(hooks) = hooks {
                    hooks.shutdown().await;
                }
                served
            })
        });
        let (addr, state) = ready_rx.recv().unwrap();
        Server {
            addr,
            state,
            clock,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// GET `target` on a fresh connection, with `X-API-Key: key` when given.
    pub fn get(&self, target: &str, key: Option<&str>) -> Response {
        let key = key
            .map(|k| format!("X-API-Key: {k}\r\n"))
            .unwrap_or_default();
        let raw = format!("GET {target} HTTP/1.1\r\nHost: test\r\n{key}Connection: close\r\n\r\n");
        self.send(raw.as_bytes()).expect("a response")
    }

    /// `method target` with a JSON body (when given) and `X-API-Key: key`, on a fresh
    /// connection.
    pub fn request(
        &self,
        method: &str,
        target: &str,
        key: Option<&str>,
        body: Option<&serde_json::Value>,
    ) -> Response {
        request(self.addr, method, target, key, body)
    }

    /// Sends `raw` on a fresh connection and reads one response (`None`: the server
    /// closed the connection without answering).
    pub fn send(&self, raw: &[u8]) -> Option<Response> {
        let mut conn = Conn::open(self.addr);
        // A write may fail when the server already answered and closed (e.g. after
        // refusing an over-long head); the answer can still be read.
        let _ = conn.stream.get_mut().write_all(raw);
        conn.read_response(false).expect("no I/O error or timeout")
    }

    /// Stops the server (as SIGTERM would) and waits for `run` to return.
    pub fn stop(mut self) -> io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(t) => t.join().expect("server thread panicked"),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// `method target` on a fresh connection to `addr`, with `X-API-Key: key` and a JSON
/// body when given.
pub fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    key: Option<&str>,
    body: Option<&serde_json::Value>,
) -> Response {
    let key = key
        .map(|k| format!("X-API-Key: {k}\r\n"))
        .unwrap_or_default();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let kind = if body.is_empty() {
        ""
    } else {
        "Content-Type: application/json\r\n"
    };
    let raw = format!(
        "{method} {target} HTTP/1.1\r\nHost: test\r\n{key}{kind}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut conn = Conn::open(addr);
    let _ = conn.stream.get_mut().write_all(raw.as_bytes());
    conn.read_response(method == "HEAD")
        .expect("no I/O error or timeout")
        .expect("a response")
}

/// One client connection.
pub struct Conn {
    /// The buffered stream.
    pub stream: BufReader<TcpStream>,
}

impl Conn {
    /// Connects, with a 10 s read timeout so a broken server fails a test instead of
    /// hanging it.
    pub fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Conn {
            stream: BufReader::new(stream),
        }
    }

    /// Writes bytes.
    pub fn write(&mut self, raw: &[u8]) {
        self.stream.get_mut().write_all(raw).unwrap();
    }

    /// Writes a keep-alive GET.
    pub fn get(&mut self, target: &str, key: Option<&str>) {
        let key = key
            .map(|k| format!("X-API-Key: {k}\r\n"))
            .unwrap_or_default();
        self.write(format!("GET {target} HTTP/1.1\r\nHost: test\r\n{key}\r\n").as_bytes());
    }

    /// Reads one response. `Ok(None)`: the connection was closed (EOF or reset) before
    /// a status line. `head_only`: the request was HEAD, so there is no body.
    pub fn read_response(&mut self, head_only: bool) -> io::Result<Option<Response>> {
        let mut line = String::new();
        match self.stream.read_line(&mut line) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(e),
        }
        let mut parts = line.trim_end().splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_owned();
        assert_eq!(version, "HTTP/1.1", "status line {line:?}");
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .expect("a status code");
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            self.stream.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (name, value) = h.split_once(':').expect("a header line");
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        // A streamed answer that ends (an export) is read whole; an event stream, which
        // does not end, is left to the caller to read.
        let chunked = response
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
            && !response
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/event-stream"));
        if head_only || status == 304 {
        } else if chunked {
            // A streamed answer: chunk sizes in hex, each chunk, then a zero-size chunk.
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size)?;
                let size =
                    usize::from_str_radix(size.trim_end().split(';').next().unwrap_or(""), 16)
                        .expect("a chunk size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk)?;
                if size == 0 {
                    break;
                }
                response.body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let len: usize = response
                .header("content-length")
                .map_or(0, |v| v.parse().unwrap());
            let mut body = vec![0; len];
            self.stream.read_exact(&mut body)?;
            response.body = body;
        }
        Ok(Some(response))
    }

    /// Whether the server has closed the connection (reads EOF or a reset).
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.stream.read(&mut byte), Ok(0))
            || matches!(self.stream.read(&mut byte), Err(e) if e.kind() == io::ErrorKind::ConnectionReset)
    }
}

/// The bytes of `method target` (`Host: test`, `Connection: close`) with `headers`
/// and `body` (and its `Content-Length` for a POST).
pub fn raw_request(method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (n, v) in headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    if method == "POST" {
        raw.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    raw.into_bytes()
}

/// The `Set-Cookie` header of `r` that sets the cookie `name` (the whole header value).
pub fn set_cookie<'a>(r: &'a Response, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .filter(|(n, _)| n == "set-cookie")
        .map(|(_, v)| v.as_str())
        .find(|v| v.starts_with(&format!("{name}=")))
}

/// `name=value` of a `Set-Cookie` header value: what a browser sends back.
pub fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

/// The value of `<input ... name="NAME" value="...">` in a page.
pub fn form_value(html: &str, name: &str) -> String {
    let at = html
        .find(&format!("name=\"{name}\" value=\""))
        .unwrap_or_else(|| panic!("no {name} field in {html}"));
    let rest = &html[at + name.len() + 15..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// A parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts a problem response: `status`, `application/problem+json`, and the RFC 9457
    /// members with `code`. Returns the document.
    pub fn assert_problem(&self, status: u16, code: &str) -> serde_json::Value {
        assert_eq!(self.status, status, "status of {}", self.text());
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        let doc = self.json();
        assert_eq!(doc["code"], code, "{doc}");
        assert_eq!(doc["type"], format!("https://tldsnap.dev/errors/{code}"));
        assert_eq!(doc["status"], status);
        assert!(doc["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(doc["detail"].as_str().is_some_and(|t| !t.is_empty()));
        doc
    }
}

/// The value of the line of `metrics` (a `/metrics` answer) that names `series` (a
/// metric's name with its labels, as written: `tldsnap_http_connections_open`,
/// `tldsnap_http_connection_errors_total{kind="evicted"}`).
pub fn metric(metrics: &str, series: &str) -> Option<u64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|n| n.trim().parse().ok())
}

/// The ids of the `events` of a page of `GET /api/v1/client/events`, in order.
pub fn event_ids(page: &serde_json::Value) -> Vec<u64> {
    page["events"]
        .as_array()
        .expect("an events array")
        .iter()
        .map(|e| e["id"].as_u64().expect("an id"))
        .collect()
}

/// Replaces the value of every `"time_elapsed":"…"` with `"<masked>"`.
pub fn mask_elapsed(body: &[u8]) -> String {
    let text = String::from_utf8(body.to_vec()).expect("UTF-8 body");
    let key = "\"time_elapsed\":\"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = rest.find('"').expect("closing quote");
        let value = &rest[..end];
        assert!(
            value.ends_with("ms") && value[..value.len() - 2].parse::<f64>().is_ok(),
            "time_elapsed {value:?}"
        );
        out.push_str("<masked>");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Compares `body` (with `time_elapsed` masked) with `tests/golden/{name}.json`. With
/// `UPDATE_GOLDEN=1` in the environment, (re)writes the file instead.
pub fn assert_golden(name: &str, body: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    let actual = mask_elapsed(body);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{actual}\n")).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert_eq!(actual, expected.trim_end_matches('\n'), "golden {name}");
}

/// Every golden body of `tests/golden/`: its name, the request that answers it, and the
/// plan of the key sent (`None`: no key). `tests/http_api.rs` checks each answer against
/// its file; `tests/openapi_schema.rs` checks each file against its response schema.
pub const GOLDEN_CASES: &[(&str, &str, Option<&str>)] = &[
    // Client cheapest: default limit, ties (9.99 broken by renewal, then key).
    (
        "client_cheapest_com",
        "/api/v1/client/prices/cheapest?tlds=com",
        Some("pro"),
    ),
    (
        "client_cheapest_limit2",
        "/api/v1/client/prices/cheapest?tlds=com,net&limit=2",
        Some("pro"),
    ),
    // Unicode in, xn-- out; renewal-only TLD; unknown TLD listed in meta.not_found;
    // duplicates collapsed keeping the first, request order kept.
    (
        "client_cheapest_mixed",
        "/api/v1/client/prices/cheapest?tlds=%D1%80%D1%84,aero,nope,CO.UK,.com,xn--p1ai&limit=3",
        Some("pro"),
    ),
    (
        "client_cheapest_basic_tier",
        "/api/v1/client/prices/cheapest?tlds=io&limit=1",
        Some("basic"),
    ),
    // Public overview variant, without and with a key.
    (
        "public_cheapest_com",
        "/api/v1/prices/cheapest?tlds=com&limit=5",
        None,
    ),
    (
        "public_cheapest_keyed",
        "/api/v1/prices/cheapest?tlds=museum,co.uk,unknown-tld",
        Some("pro"),
    ),
    // Prices: chosen registrars with an unknown one; every registrar; renewal-only.
    (
        "client_prices_chosen",
        "/api/v1/client/prices?tlds=com,net,nope&registrars=alpha,charlie,zulu",
        Some("pro"),
    ),
    (
        "client_prices_all",
        "/api/v1/client/prices?tlds=com,aero",
        Some("pro"),
    ),
    (
        "public_prices",
        "/api/v1/prices?tlds=com,io&registrars=charlie,alpha",
        None,
    ),
    (
        "public_prices_v1",
        "/v1/prices?tlds=com,io&registrars=charlie,alpha",
        None,
    ),
    // Registrar listing: cut to 5 with message (free, basic); all (pro); prices.
    (
        "registrars_com_free",
        "/api/v1/client/registrars/tld/com",
        Some("free"),
    ),
    (
        "registrars_com_basic_prices",
        "/api/v1/client/registrars/tld/com?include_prices=true",
        Some("basic"),
    ),
    (
        "registrars_com_pro",
        "/api/v1/client/registrars/tld/com?include_prices=false",
        Some("pro"),
    ),
    (
        "registrars_rf_pro_prices",
        "/api/v1/client/registrars/tld/%D1%80%D1%84?include_prices=true",
        Some("pro"),
    ),
    (
        "registrars_aero_pro",
        "/api/v1/client/registrars/tld/aero",
        Some("pro"),
    ),
    ("healthz", "/healthz", None),
    // Prices as of a day, from the history (issue 17).
    (
        "client_cheapest_at",
        "/api/v1/client/prices/cheapest?tlds=com,de,net&at=2025-07-01",
        Some("pro"),
    ),
    (
        "public_cheapest_at",
        "/api/v1/prices/cheapest?tlds=com&at=2026-01-01",
        None,
    ),
    (
        "client_prices_at",
        "/api/v1/client/prices?tlds=com,de&at=2025-12-31",
        Some("pro"),
    ),
    (
        "public_prices_at",
        "/api/v1/prices?tlds=com&registrars=delta,alpha&at=2025-06-01",
        None,
    ),
    // History: every registrar; a window with the price in effect at its start.
    (
        "client_history_com",
        "/api/v1/client/history/tld/com",
        Some("pro"),
    ),
    (
        "public_history_window",
        "/api/v1/history/tld/com?from=2025-06-01&to=2025-12-31&registrars=alpha,delta,zulu",
        None,
    ),
    // Overview: member fields for a plan that covers the TLD, hidden otherwise;
    // an IANA TLD nobody sells.
    (
        "client_overview_museum",
        "/api/v1/client/overview/tld/museum",
        Some("pro"),
    ),
    ("public_overview_com", "/api/v1/overview/tld/com", None),
    (
        "public_overview_museum",
        "/api/v1/overview/tld/museum",
        None,
    ),
    ("public_overview_unsold", "/api/v1/overview/tld/zip", None),
    // Catalogue: every TLD, filters, the other orders, a cut page.
    ("client_tlds_all", "/api/v1/client/tlds", Some("pro")),
    (
        "public_tlds_page",
        "/api/v1/tlds?limit=3&sort=cheapest",
        None,
    ),
    ("public_tlds_q_unicode", "/api/v1/tlds?q=%D1%80", None),
    (
        "public_tlds_type",
        "/api/v1/tlds?type=country-code&sort=registrars",
        None,
    ),
    // Registrars: the list, one registrar paged, the website_url.
    ("registrar_list", "/api/v1/registrars", None),
    (
        "registrar_alpha_page",
        "/api/v1/registrars/alpha?limit=2",
        None,
    ),
    (
        "registrar_alpha_pro",
        "/api/v1/registrars/alpha",
        Some("pro"),
    ),
];

/// The arguments of a `tldsnap serve` that watches `snap` (every 20 ms) with `keys`,
/// [`TEST_PLANS`] (written to `dir/plans.json`) and `dir/DATA` as its data directory,
/// then `extra`.
pub fn watching_args(
    dir: &TempDir,
    snap: &Path,
    keys: &Path,
    data: &str,
    extra: &[&str],
) -> Vec<String> {
    let plans = dir.path("plans.json");
    std::fs::write(&plans, TEST_PLANS).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    let mut args: Vec<String> = vec![
        "--snapshot".into(),
        path(snap),
        "--keys".into(),
        path(keys),
        "--plans".into(),
        path(&plans),
        "--data-dir".into(),
        path(&dir.path(data)),
        "--watch".into(),
        "--watch-interval-ms".into(),
        "20".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// The real binary, its stderr read line by line on a thread.
pub struct Binary {
    /// The process.
    pub child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    log: Vec<String>,
    /// Where it listens.
    pub addr: String,
}

impl Binary {
    /// Starts `tldsnap serve --addr 127.0.0.1:0 ARGS`; returns once it listens.
    pub fn start(args: &[&str]) -> Binary {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tldsnap"))
            .arg("serve")
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bin = Binary {
            child,
            lines,
            log: Vec::new(),
            addr: String::new(),
        };
        let line = bin.wait_for("listening on http://");
        let addr = line
            .split("http://")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        bin.addr = addr.to_owned();
        bin
    }

    /// The next stderr line containing `needle` (60 s at most: a guard against a hang,
    /// not a timing check; a debug build starting on the embedded data on a loaded 2-core
    /// machine has taken over 10 s).
    pub fn wait_for(&mut self, needle: &str) -> String {
        loop {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(e) => panic!("waiting for {needle:?}: {e}; log so far: {:#?}", self.log),
            }
        }
    }

    /// GET on a fresh connection.
    pub fn get(&self, target: &str, key: Option<&str>) -> Response {
        let key = key
            .map(|k| format!("X-API-Key: {k}\r\n"))
            .unwrap_or_default();
        let mut conn = Conn::open(self.addr.parse().unwrap());
        conn.write(
            format!("GET {target} HTTP/1.1\r\nHost: t\r\n{key}Connection: close\r\n\r\n")
                .as_bytes(),
        );
        conn.read_response(false).unwrap().unwrap()
    }

    /// Sends the signal `name` (`HUP`, `TERM`, ...).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The served snapshot's hash, from `/readyz`.
    pub fn hash(&self) -> serde_json::Value {
        self.get("/readyz", None).json()["snapshot"]["hash"].clone()
    }

    /// The process's resident memory, in bytes (from `/proc`).
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .expect("VmRSS in /proc/PID/status")
            * 1024
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `promtool check metrics` on an exposition: it must pass. Without promtool, a loud
/// note (and a failure when `CI` is set: .ci/run installs it).
pub fn promtool_check(text: &str) {
    match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "promtool check metrics: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            println!("promtool check metrics: clean");
        }
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "promtool is missing ({e}): install the prometheus package (.ci/run does)"
            );
            println!("\n*** promtool NOT RUN: {e}. .ci/run installs it; in CI this fails. ***\n");
        }
    }
}
