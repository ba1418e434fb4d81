//! Hostile clients against the real binary (issue 19): one client must not be able to
//! exhaust the server's memory or make everyone else wait.
//!
//! - Pipelining without reading: a connection's unsent output is bounded, so 20
//!   connections that pipeline requests for `/openapi.json` (23 KB answers) and never
//!   read grow the process by no more than 150 MB (it was 2.3 GB).
//! - Idle-connection floods: one address holds at most its cap of connections, and a
//!   full server closes idle connections first, so a client from another address is
//!   answered while one address (or several) floods.
//!
//! These run the real `tldsnap` binary so that `/proc/PID/status` measures the server
//! alone, and use loopback addresses 127.0.0.2-127.0.0.9 as distinct clients.

mod http_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use http_support::{Binary, Conn};
use socket2::{Domain, Socket, Type};

/// A TCP connection to `to` from the loopback address `from` (port chosen by the
/// kernel).
fn connect_from(from: &str, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&local.into())?;
    socket.connect(&to.into())?;
    Ok(socket.into())
}

#[test]
fn pipelining_clients_that_never_read_cannot_grow_the_server_without_bound() {
    let bin = Binary::start(&[]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    // Warm up: the first answers allocate what every later one reuses.
    for _ in 0..3 {
        assert_eq!(bin.get("/openapi.json", None).status, 200);
    }
    let before = bin.rss_bytes();

    // 20 connections, each sending 780 KB of pipelined requests and reading nothing.
    let request = b"GET /openapi.json HTTP/1.1\r\nHost: t\r\n\r\n";
    let batch: Vec<u8> = request.repeat(780 * 1024 / request.len());
    let attackers: Vec<_> = (0..20)
        .map(|_| {
            let batch = batch.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                // When the server stops reading, the write blocks: give up after a while
                // and keep the connection open, unread.
                s.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
                let mut sent = 0;
                for chunk in batch.chunks(16 * 1024) {
                    match s.write_all(chunk) {
                        Ok(()) => sent += chunk.len(),
                        Err(_) => break,
                    }
                }
                (s, sent)
            })
        })
        .collect();
    let held: Vec<(TcpStream, usize)> = attackers.into_iter().map(|t| t.join().unwrap()).collect();
    // Let the server work through whatever it read.
    std::thread::sleep(Duration::from_millis(500));
    let after = bin.rss_bytes();
    let grown = after.saturating_sub(before);
    let sent: usize = held.iter().map(|(_, n)| n).sum();
    eprintln!(
        "rss before {} MB, after {} MB, grown {} MB; {} KB of requests accepted by the kernel",
        before >> 20,
        after >> 20,
        grown >> 20,
        sent >> 10
    );
    assert!(
        grown <= 150 << 20,
        "20 pipelining connections grew the server by {} MB",
        grown >> 20
    );
    // The server still answers others.
    assert_eq!(bin.get("/healthz", None).status, 200);
    drop(held);
}

/// Opens `n` connections from `from` to `to` that send nothing; stops at the first
/// that cannot be opened.
fn idle_flood(from: &str, to: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n).map_while(|_| connect_from(from, to).ok()).collect()
}

/// GET /healthz from `from` on a fresh connection; the status, or `None` when the
/// server closed without answering.
fn healthz_from(from: &str, to: SocketAddr) -> Option<u16> {
    let stream = connect_from(from, to).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut conn = Conn {
        stream: std::io::BufReader::new(stream),
    };
    conn.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    conn.read_response(false)
        .expect("an answer, not a read timeout")
        .map(|r| r.status)
}

#[test]
fn one_address_flooding_with_idle_connections_does_not_stall_another() {
    // A long idle timeout, so the watchdog cannot be what rescues the victim.
    let bin = Binary::start(&["--header-timeout", "60"]);
    let addr: SocketAddr = bin.addr.parse().unwrap();

    // 1,100 idle connections from one address (the limit is 1,024).
    let flood = idle_flood("127.0.0.3", addr, 1100);
    assert_eq!(
        flood.len(),
        1100,
        "the flood could not open its connections"
    );
    // The attacker keeps reopening connections as they are closed, for a while.
    let reopen = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(2);
        let mut opened = 0;
        while Instant::now() < until {
            if let Ok(mut s) = connect_from("127.0.0.3", addr) {
                let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n");
                opened += 1;
            }
        }
        opened
    });
    // Meanwhile a client from another address is answered, each time.
    for _ in 0..5 {
        let asked = Instant::now();
        assert_eq!(healthz_from("127.0.0.2", addr), Some(200));
        eprintln!("victim answered in {:?}", asked.elapsed());
    }
    let reopened = reopen.join().unwrap();
    eprintln!("the attacker reopened {reopened} connections meanwhile");

    // The flood's connections past the cap (256 by default) were closed, most with a
    // 429 that says why (past 256 refusals in flight at once, the rest without one).
    let (mut told, mut closed) = (0, 0);
    for mut s in flood {
        s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        let mut buf = [0u8; 12];
        match s.read(&mut buf) {
            Ok(12) if &buf == b"HTTP/1.1 429" => told += 1,
            Ok(0) => closed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
            _ => {}
        }
    }
    eprintln!("flood: {told} refused with 429, {closed} closed without an answer");
    assert!(told > 0);
    assert_eq!(
        told + closed,
        1100 - 256,
        "the flood held more than its cap"
    );
    let metrics = bin.get("/metrics", None).text();
    assert!(
        metrics.contains("tldsnap_http_connection_errors_total{kind=\"refused_per_address\"}"),
        "{metrics}"
    );
}

#[test]
fn a_server_full_of_idle_connections_from_many_addresses_makes_room() {
    let bin = Binary::start(&["--header-timeout", "60", "--max-connections", "300"]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    // Five addresses, 100 idle connections each: 500 against a limit of 300 — no
    // address is over its cap, the server is full of idle connections.
    let flood: Vec<TcpStream> = (3..8)
        .flat_map(|i| idle_flood(&format!("127.0.0.{i}"), addr, 100))
        .collect();
    assert_eq!(flood.len(), 500);
    // The victim is answered: the longest-idle connections make room.
    for _ in 0..5 {
        assert_eq!(healthz_from("127.0.0.2", addr), Some(200));
    }
    let metrics = bin.get("/metrics", None).text();
    let evicted: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("tldsnap_http_connection_errors_total{kind=\"evicted\"} "))
        .and_then(|n| n.parse().ok())
        .expect("the evicted counter");
    assert!(evicted >= 200, "evicted {evicted}: {metrics}");
    drop(flood);
}

#[test]
fn thread_per_core_serving_shares_one_connection_table_and_drains() {
    // Two serving threads, each with a listener of its own (SO_REUSEPORT): the kernel
    // spreads the connections over them, and the limits hold for the server as a whole.
    let mut bin = Binary::start(&[
        "--runtime",
        "per-thread",
        "--threads",
        "2",
        "--max-connections-per-address",
        "8",
        "--header-timeout",
        "60",
    ]);
    let addr: SocketAddr = bin.addr.parse().unwrap();
    // Every connection is answered, whichever thread accepted it.
    for _ in 0..40 {
        assert_eq!(healthz_from("127.0.0.2", addr), Some(200));
    }
    // 20 idle connections from one address: 8 are held, 12 refused, whichever of the
    // two listeners the kernel gave them to.
    let flood = idle_flood("127.0.0.3", addr, 20);
    assert_eq!(flood.len(), 20);
    let (mut refused, mut held) = (0, 0);
    for mut s in flood {
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut buf = [0u8; 12];
        match s.read(&mut buf) {
            Ok(12) if &buf == b"HTTP/1.1 429" => refused += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => held += 1,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => held += 1,
            other => panic!("unexpected: {other:?}"),
        }
    }
    assert_eq!((held, refused), (8, 12));
    // Another address is still answered.
    assert_eq!(healthz_from("127.0.0.4", addr), Some(200));

    // SIGTERM: an open keep-alive connection is closed, and the process stops.
    let mut conn = Conn::open(addr);
    conn.get("/healthz", None);
    assert_eq!(conn.read_response(false).unwrap().unwrap().status, 200);
    bin.signal("TERM");
    bin.wait_for("tldsnap: stopped");
    let status = bin.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
