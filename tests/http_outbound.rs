//! Outbound work never holds inbound capacity, against the real binary.
//!
//! A webhook receiver that accepts connections and never answers (a listener on
//! 127.0.0.1:0 whose connections are held and never written to) makes every test
//! message to it wait for the delivery deadline (10 s). Against it:
//!
//! - 40 `POST /webhooks/{id}/test` from one key on a server of 40 connections: one test
//!   is in flight, the 39 others are refused at once (409 `webhook_test_in_flight`,
//!   `Retry-After`), and another client address (127.0.0.2) is served within 1 s. Once
//!   the flooding client's sockets are closed (as a killed process's are), no
//!   connection of it stays open 5 s later, and the server's connection to the receiver
//!   is closed too: the request and its outbound attempt were cancelled.
//! - One key's requests in flight are capped across the server
//!   (`--max-in-flight-per-key`): past the cap, 429 `too_many_in_flight` at once, for
//!   every endpoint; when the waiting requests' clients leave, the key is served again.
//! - A test costs one credit; a refused one costs none; a client that shuts down its
//!   sending side after a test whose answer comes at once still gets it.

mod http_support;

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::{Binary, Conn, Response, TEST_PLANS, TempDir, metric, request};
use serde_json::{Value, json};
use socket2::{Domain, Socket, Type};

const HOOKS: &str = "/api/v1/client/webhooks";

/// A TCP connection to `to` from the loopback address `from`, with a 10 s read timeout
/// (a broken server fails the test instead of hanging it).
fn connect_from(from: &str, to: SocketAddr) -> Conn {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&local.into()).unwrap();
    socket.connect(&to.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    Conn {
        stream: std::io::BufReader::new(stream),
    }
}

/// A GET from the address `from` on a fresh connection.
fn get_from(from: &str, to: SocketAddr, target: &str) -> Option<Response> {
    let mut conn = connect_from(from, to);
    conn.write(format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes());
    conn.read_response(false).ok().flatten()
}

/// A webhook receiver that accepts every connection and never writes a byte: the
/// connections it holds, and how many of them the server has closed.
struct Silent {
    addr: SocketAddr,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Silent {
    fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let held = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&held);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                stream.set_nonblocking(true).unwrap();
                keep.lock().unwrap().push(stream);
            }
        });
        Silent { addr, held }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Connections accepted so far.
    fn accepted(&self) -> usize {
        self.held.lock().unwrap().len()
    }

    /// Connections the server has not closed (reads neither EOF nor a reset; what the
    /// server sent, its request, is read and dropped).
    fn open(&self) -> usize {
        let mut held = self.held.lock().unwrap();
        let mut open = 0;
        for s in held.iter_mut() {
            let mut buf = [0u8; 4096];
            let closed = loop {
                match s.read(&mut buf) {
                    Ok(0) => break true,
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            };
            if !closed {
                open += 1;
            }
        }
        open
    }
}

/// Waits (at most `limit`) until `done` holds; whether it did.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `tldsnap serve` on the fixture snapshot with the test keys, `plans`, a data
/// directory and webhooks to loopback allowed, then `extra`.
fn server(
    dir: &TempDir,
    plans: &str,
    extra: &[&str],
) -> (Binary, std::collections::BTreeMap<&'static str, String>) {
    let snap = dir.fixture_snapshot("served.snap");
    let (keys, raw) = dir.keys();
    let data = dir.path("data");
    let plans_file = dir.path("plans.json");
    std::fs::write(&plans_file, plans).unwrap();
    let mut args = vec![
        "--snapshot",
        snap.to_str().unwrap(),
        "--keys",
        keys.to_str().unwrap(),
        "--plans",
        plans_file.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--allow-private-webhooks",
    ];
    args.extend_from_slice(extra);
    (Binary::start(&args), raw)
}

fn subscribe(addr: SocketAddr, key: &str, url: &str) -> String {
    let r = request(addr, "POST", HOOKS, Some(key), Some(&json!({ "url": url })));
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["id"].as_str().unwrap().to_owned()
}

/// A keep-alive `POST /webhooks/{id}/test` written on `conn`, not waited for.
fn send_test(conn: &mut Conn, id: &str, key: &str) {
    conn.write(
        format!(
            "POST {HOOKS}/{id}/test HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Length: 0\r\n\r\n"
        )
        .as_bytes(),
    );
}

/// The server's own count of open connections, read on a connection of its own (which
/// it counts: one is the reader).
fn connections_open(bin: &Binary) -> u64 {
    let metrics = bin.get("/metrics", None).text();
    metric(&metrics, "tldsnap_http_connections_open")
        .unwrap_or_else(|| panic!("no tldsnap_http_connections_open in {metrics}"))
}

#[test]
fn a_test_flood_at_a_silent_receiver_holds_nothing_of_anyone_else() {
    let dir = TempDir::new("outbound-flood");
    let (bin, raw) = server(&dir, TEST_PLANS, &["--max-connections", "40"]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    let pro = raw["pro"].as_str();
    let receiver = Silent::start();
    let id = subscribe(addr, pro, &receiver.url());

    // 40 tests of one subscription, each on a connection of its own, from 127.0.0.1.
    let mut flood: Vec<Conn> = (0..40).map(|_| connect_from("127.0.0.1", addr)).collect();
    for conn in &mut flood {
        send_test(conn, &id, pro);
    }
    // The first is being sent to the receiver (and waits there for 10 s).
    assert!(
        within(Duration::from_secs(10), || receiver.accepted() >= 1),
        "no test message reached the receiver"
    );
    // Every request of the flood has reached the server.
    std::thread::sleep(Duration::from_millis(300));

    // Another address is served at once, on a server whose 40 connections the flood
    // opened.
    for target in ["/healthz", "/api/v1/prices?tlds=com"] {
        let asked = Instant::now();
        let r = get_from("127.0.0.2", addr, target).expect("an answer");
        let took = asked.elapsed();
        assert_eq!(r.status, 200, "{target} from 127.0.0.2: {}", r.text());
        assert!(took < Duration::from_secs(1), "{target} took {took:?}");
    }

    // One test is in flight; every other was refused at once, with when to retry.
    let mut refused = 0;
    let mut waiting = Vec::new();
    for mut conn in flood {
        conn.stream
            .get_mut()
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        match conn.read_response(false) {
            Ok(Some(r)) => {
                r.assert_problem(409, "webhook_test_in_flight");
                assert_eq!(r.header("retry-after"), Some("10"));
                assert_eq!(r.json()["retry_after"], 10);
                refused += 1;
                waiting.push(conn);
            }
            // Evicted to make room for 127.0.0.2 (an idle keep-alive connection).
            Ok(None) => refused += 1,
            Err(e) => {
                assert!(
                    matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "{e}"
                );
                waiting.push(conn);
            }
        }
    }
    assert_eq!(refused, 39, "one test in flight, the others refused");
    assert_eq!(receiver.accepted(), 1, "one attempt at the receiver");

    // The flooding client dies: its sockets are closed by the kernel, as here.
    drop(waiting);
    let died = Instant::now();
    // No connection of it stays open, on the server or from the server to the
    // receiver (the test in flight was cancelled with its request).
    let mut open = u64::MAX;
    let closed = within(Duration::from_secs(5), || {
        open = connections_open(&bin);
        open == 1 && receiver.open() == 0
    });
    assert!(
        closed,
        "{:?} after the client died: {open} connections open (1 is the reader), \
         {} to the receiver",
        died.elapsed(),
        receiver.open()
    );
    eprintln!("closed {:?} after the client died", died.elapsed());
    // Nothing more is sent on its behalf.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(receiver.accepted(), 1);
    // The cancelled test does not block the next.
    let mut conn = connect_from("127.0.0.1", addr);
    send_test(&mut conn, &id, pro);
    assert!(within(Duration::from_secs(5), || receiver.accepted() == 2));
    // Counted as connections whose client went away mid-answer.
    let metrics = bin.get("/metrics", None).text();
    let incomplete = metric(
        &metrics,
        "tldsnap_http_connection_errors_total{kind=\"incomplete\"}",
    )
    .expect("the incomplete counter");
    assert!(incomplete >= 1, "{metrics}");
}

#[test]
fn one_keys_requests_in_flight_are_capped_and_freed_when_their_clients_leave() {
    let dir = TempDir::new("outbound-cap");
    let (bin, raw) = server(&dir, TEST_PLANS, &["--max-in-flight-per-key", "3"]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    let pro = raw["pro"].as_str();
    let receiver = Silent::start();
    let ids: Vec<String> = (0..5)
        .map(|_| subscribe(addr, pro, &receiver.url()))
        .collect();

    // Three tests of three subscriptions wait on the receiver.
    let mut waiting: Vec<Conn> = ids[..3]
        .iter()
        .map(|id| {
            let mut conn = Conn::open(addr);
            send_test(&mut conn, id, pro);
            conn
        })
        .collect();
    assert!(
        within(Duration::from_secs(10), || receiver.accepted() == 3),
        "the three tests did not reach the receiver"
    );
    // A fourth request of the key, of any endpoint, is refused at once.
    let asked = Instant::now();
    let mut conn = Conn::open(addr);
    send_test(&mut conn, &ids[3], pro);
    let r = conn.read_response(false).unwrap().unwrap();
    r.assert_problem(429, "too_many_in_flight");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.json()["limit"], 3);
    assert!(r.header("ratelimit-limit").is_some(), "the meter headers");
    let r = request(addr, "GET", HOOKS, Some(pro), None);
    r.assert_problem(429, "too_many_in_flight");
    let r = request(addr, "GET", "/api/v1/prices?tlds=com", Some(pro), None);
    r.assert_problem(429, "too_many_in_flight");
    assert!(asked.elapsed() < Duration::from_secs(5));
    // Other keys are not held by it.
    let enterprise = raw["enterprise"].as_str();
    assert_eq!(
        request(addr, "GET", HOOKS, Some(enterprise), None).status,
        200
    );

    // The waiting clients leave: their requests are cancelled, and the key is served.
    for conn in &mut waiting {
        conn.stream
            .get_mut()
            .shutdown(std::net::Shutdown::Both)
            .unwrap();
    }
    drop(waiting);
    assert!(
        within(Duration::from_secs(5), || {
            request(addr, "GET", HOOKS, Some(pro), None).status == 200
        }),
        "the key's cap was not freed when its clients left"
    );
    assert!(within(Duration::from_secs(5), || receiver.open() == 0));
}

#[test]
fn a_test_costs_a_credit_and_a_half_closed_client_gets_a_quick_answer() {
    let dir = TempDir::new("outbound-credit");
    // `tiny`: two credits, with webhooks.
    let plans = TEST_PLANS.replace(
        r#""registrar_list_limit": 5}"#,
        r#""registrar_list_limit": 5, "events": true, "webhooks": 1}"#,
    );
    assert_ne!(plans, TEST_PLANS);
    let (bin, raw) = server(&dir, &plans, &[]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    let tiny = raw["tiny"].as_str();
    // A receiver that refuses connections: the attempt fails at once.
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let id = subscribe(addr, tiny, &format!("http://{refused}/hook"));
    let credits =
        |r: &Response| -> u64 { r.header("x-credits-remaining").unwrap().parse().unwrap() };
    assert_eq!(credits(&request(addr, "GET", HOOKS, Some(tiny), None)), 2);

    // The request, then the client's sending side shut: the answer, ready at once,
    // still comes.
    let mut conn = Conn::open(addr);
    send_test(&mut conn, &id, tiny);
    conn.stream
        .get_mut()
        .shutdown(std::net::Shutdown::Write)
        .unwrap();
    let r = conn.read_response(false).unwrap().expect("the answer");
    assert_eq!(r.status, 200, "{}", r.text());
    let attempt: Value = r.json()["attempt"].clone();
    assert_eq!(attempt["result"], "test");
    assert!(attempt["error"].is_string(), "{attempt}");
    assert_eq!(credits(&r), 1, "a test costs one credit");
    assert_eq!(
        credits(&request(addr, "GET", HOOKS, Some(tiny), None)),
        1,
        "the other webhook calls cost none"
    );
    let test = format!("{HOOKS}/{id}/test");
    assert_eq!(request(addr, "POST", &test, Some(tiny), None).status, 200);
    // No credit left: refused before anything is sent.
    let r = request(addr, "POST", &test, Some(tiny), None);
    r.assert_problem(429, "credits_exhausted");
    let shown = request(addr, "GET", &format!("{HOOKS}/{id}"), Some(tiny), None);
    assert_eq!(shown.status, 200, "{}", shown.text());
    assert_eq!(
        shown.json()["recent_attempts"].as_array().unwrap().len(),
        2,
        "two tests sent, the refused one not"
    );
}
