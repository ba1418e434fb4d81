//! A Server-Sent Events client for the event suites: a raw connection, chunked transfer
//! decoding by hand, as the rest of the suite reads HTTP.

use std::io::{BufRead, Read};
use std::net::SocketAddr;

use super::Conn;

/// The stream's path.
pub const STREAM: &str = "/api/v1/client/events/stream";

/// One message of an event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Event {
        id: u64,
        event: String,
        data: serde_json::Value,
    },
    Comment(String),
    Retry(u64),
}

/// A Server-Sent Events subscription over a raw connection (chunked transfer decoding
/// by hand, as the rest of the suite reads HTTP).
pub struct Sse {
    conn: Conn,
    text: String,
    /// The server ended the body (its zero chunk).
    pub ended: bool,
}

impl Sse {
    /// Opens the stream; returns the status and headers' response when it is not 200.
    pub fn open(
        addr: SocketAddr,
        query: &str,
        key: &str,
        last_event_id: Option<u64>,
    ) -> Result<Sse, super::Response> {
        let mut conn = Conn::open(addr);
        let last = last_event_id
            .map(|id| format!("Last-Event-ID: {id}\r\n"))
            .unwrap_or_default();
        conn.write(
            format!(
                "GET {STREAM}{query} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nAccept: text/event-stream\r\n{last}\r\n"
            )
            .as_bytes(),
        );
        let mut status = String::new();
        conn.stream.read_line(&mut status).unwrap();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            conn.stream.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (n, v) = h.split_once(':').unwrap();
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        let code: u16 = status.split(' ').nth(1).unwrap().parse().unwrap();
        if code != 200 {
            let len: usize = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; len];
            conn.stream.read_exact(&mut body).unwrap();
            return Err(super::Response {
                status: code,
                headers,
                body,
            });
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("content-type"), Some("text/event-stream"));
        assert_eq!(header("transfer-encoding"), Some("chunked"));
        assert_eq!(header("cache-control"), Some("no-store"));
        assert!(header("ratelimit-limit").is_some(), "{headers:?}");
        Ok(Sse {
            conn,
            text: String::new(),
            ended: false,
        })
    }

    /// Reads one chunk of the body; false at the end of the body (the zero chunk).
    pub fn read_chunk(&mut self) -> bool {
        let mut size = String::new();
        self.conn
            .stream
            .read_line(&mut size)
            .expect("a chunk before the read timeout");
        let size = usize::from_str_radix(size.trim_end(), 16)
            .unwrap_or_else(|_| panic!("chunk size line {size:?}"));
        let mut data = vec![0; size + 2];
        self.conn.stream.read_exact(&mut data).unwrap();
        assert_eq!(&data[size..], b"\r\n");
        if size == 0 {
            self.ended = true;
            return false;
        }
        self.text
            .push_str(std::str::from_utf8(&data[..size]).unwrap());
        true
    }

    /// The next message; `None` once the server ended the stream.
    pub fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                return Some(parse(block.trim_end()));
            }
            if self.ended || !self.read_chunk() {
                return None;
            }
        }
    }

    /// The next `n` events, skipping comments and retry lines.
    pub fn events(&mut self, n: usize) -> Vec<(u64, String, serde_json::Value)> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next().expect("the stream goes on") {
                Message::Event { id, event, data } => out.push((id, event, data)),
                Message::Comment(_) | Message::Retry(_) => {}
            }
        }
        out
    }
}

fn parse(block: &str) -> Message {
    if let Some(c) = block.strip_prefix(':') {
        return Message::Comment(c.trim().to_owned());
    }
    if let Some(r) = block.strip_prefix("retry: ") {
        return Message::Retry(r.parse().unwrap());
    }
    let (mut id, mut event, mut data) = (None, None, None);
    for line in block.lines() {
        let (field, value) = line.split_once(": ").unwrap();
        match field {
            "id" => id = Some(value.parse().unwrap()),
            "event" => event = Some(value.to_owned()),
            "data" => data = Some(serde_json::from_str(value).unwrap()),
            other => panic!("unexpected field {other:?} in {block:?}"),
        }
    }
    Message::Event {
        id: id.expect("every event has an id"),
        event: event.unwrap(),
        data: data.unwrap(),
    }
}
