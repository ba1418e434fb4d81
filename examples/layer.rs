//! tldsnap's connection layer alone: `http::server::run` on a current_thread runtime with
//! a handler that answers every request with the same body and headers, as the hyper
//! baseline `hyperct-h` does (tools/baseline with `--header`). Under callgrind, the
//! difference to `hyperct-h` is what the connection layer costs per request (limits,
//! watchdog flags, the answer's guard, the body type), and the difference to
//! `tldsnap serve` is what the API costs (docs/PERFORMANCE.md, "Instructions per
//! request").
//!
//! ```sh
//! cargo build --release --example layer
//! target/release/examples/layer 127.0.0.1:8081 body.json "ratelimit-limit: 100" ...
//! ```
//!
//! Stops on Ctrl-C (SIGINT).
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response};
use tldsnap::http::body::Body;
use tldsnap::http::server::{self, Config, Handler, Refusal, Reply, Unparsable};

struct Fixed {
    body: Bytes,
    headers: HeaderMap,
}

impl Handler for Fixed {
    type Connection = ();
    type Later = std::future::Ready<Response<Body>>;
    fn connect(&self, _: SocketAddr) {}
    fn handle(this: &Arc<Fixed>, _req: Request<Incoming>, _: &Arc<()>) -> Reply<Self::Later> {
        let mut r = Response::new(Body::from(this.body.clone()));
        *r.headers_mut() = this.headers.clone();
        Reply::Now(r)
    }
    fn refusal(&self, _: Refusal) -> Vec<u8> {
        Vec::new()
    }
    fn unparsable(&self, _: Unparsable) -> Vec<u8> {
        Vec::new()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: layer ADDR BODY_FILE ['name: value' ...]");
        std::process::exit(2);
    }
    let addr: SocketAddr = args[1].parse().expect("ADDR: an address and port");
    let body = Bytes::from(std::fs::read(&args[2]).expect("BODY_FILE: a readable file"));
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for line in &args[3..] {
        let (n, v) = line.split_once(": ").expect("a header is 'name: value'");
        headers.append(
            HeaderName::from_bytes(n.as_bytes()).expect("a header name"),
            HeaderValue::from_str(v).expect("a header value"),
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let config = Config {
            max_connections: 4096,
            max_connections_per_address: 4096,
            ..Config::default()
        };
        server::run(listener, Arc::new(Fixed { body, headers }), config, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .unwrap();
    });
}
