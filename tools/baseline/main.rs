//! `tldsnap-baseline`: the smallest hyper 1.x server that answers every request with one
//! fixed body read from a file. The load harness (`tools/loadtest`) runs it beside
//! `tldsnap serve` on the same bytes: whatever it reaches is the ceiling that any hyper
//! service can reach on this machine, so tldsnap's figures are quoted as a ratio to it.
//!
//! ```text
//! tldsnap-baseline --addr 127.0.0.1:8090 --body target/loadtest/bodies/cheapest1.json
//! ```
//!
//! It does what a hyper service cannot avoid and nothing else: HTTP/1.1 with keep-alive
//! (hyper's default), `TCP_NODELAY` (as tldsnap sets it), one task per connection, on a
//! tokio runtime of `--runtime`: `current-thread` (one thread, no work stealing: the
//! fastest honest ceiling on one core, and the one the harness quotes ratios to) or
//! `multi-thread` (one worker per core, as tldsnap's default). No routing, no parsing of the
//! request beyond what hyper does, no header read timeout (which needs a timer).
//!
//! `--flatten` copies each body behind its head and sends the two with one `write`
//! (hyper's `writev(false)`) instead of one `writev`: ~3% less CPU a request for a
//! small body, the configuration the harness quotes its ratios to.
//!
//! `--header 'name: value'` (repeatable) adds fixed headers to every answer, cloned
//! from a template map as tldsnap clones its own: run with the headers a tldsnap answer
//! carries (the four metering headers of docs/API.md, "Keys, plans and metering"), it tells how much of tldsnap's cost
//! per request is writing those headers at all, apart from working out their values.
//! The harness quotes its ratios to the server without them.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A fixed-body hyper server: the ceiling baseline of the load harness.
#[derive(Parser)]
#[command(name = "tldsnap-baseline", version, about)]
struct Args {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
    /// File whose bytes are the body of every response.
    #[arg(long)]
    body: PathBuf,
    /// Value of the Content-Type header.
    #[arg(long, default_value = "application/json")]
    content_type: String,
    /// A header added to every answer, `name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Worker threads of the multi-thread runtime (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// The tokio runtime: `current-thread` or `multi-thread`.
    #[arg(long, default_value = "multi-thread", value_parser = ["current-thread", "multi-thread"])]
    runtime: String,
    /// Copy each body behind its head in hyper's write buffer and send both with one
    /// `write` (hyper's `writev(false)`), instead of one `writev` of the two.
    #[arg(long)]
    flatten: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let body = match std::fs::read(&args.body) {
        Ok(b) => Bytes::from(b),
        Err(e) => {
            eprintln!("error: reading {}: {e}", args.body.display());
            return ExitCode::from(1);
        }
    };
    let content_type = match HeaderValue::from_str(&args.content_type) {
        Ok(v) => v,
        Err(_) => {
            eprintln!(
                "error: --content-type {:?} is not a valid header value",
                args.content_type
            );
            return ExitCode::from(2);
        }
    };
    let mut extra = HeaderMap::new();
    for line in &args.headers {
        let parsed = line.split_once(':').and_then(|(name, value)| {
            let name = HeaderName::from_bytes(name.trim().as_bytes()).ok()?;
            Some((name, HeaderValue::from_str(value.trim()).ok()?))
        });
        let Some((name, value)) = parsed else {
            eprintln!("error: --header {line:?} is not `name: value`");
            return ExitCode::from(2);
        };
        extra.append(name, value);
    }
    let mut runtime = if args.runtime == "current-thread" {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut rt = tokio::runtime::Builder::new_multi_thread();
        if let Some(n) = args.threads {
            rt.worker_threads(n.max(1));
        }
        rt
    };
    let runtime = match runtime.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve(args.addr, body, content_type, extra, args.flatten)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Accepts connections until SIGINT / SIGTERM and serves each on its own task.
async fn serve(
    addr: SocketAddr,
    body: Bytes,
    content_type: HeaderValue,
    extra: HeaderMap,
    flatten: bool,
) -> std::io::Result<()> {
    let mut builder = http1::Builder::new();
    if flatten {
        builder.writev(false);
    }
    let builder = Arc::new(builder);
    // With --header: every answer's headers, content type first, cloned per answer.
    let template = (!extra.is_empty()).then(|| {
        let mut template = HeaderMap::with_capacity(extra.len() + 1);
        template.insert(CONTENT_TYPE, content_type.clone());
        for (name, value) in &extra {
            template.append(name, value.clone());
        }
        Arc::new(template)
    });
    let listener = TcpListener::bind(addr).await?;
    // The harness reads this line to learn the port when it asked for port 0.
    println!("listening on {}", listener.local_addr()?);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    eprintln!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
            _ = term.recv() => return Ok(()),
        };
        // Small responses must not wait for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        let body = body.clone();
        let content_type = content_type.clone();
        let template = template.clone();
        let builder = builder.clone();
        tokio::spawn(async move {
            let service = service_fn(move |_req: Request<hyper::body::Incoming>| {
                let mut response = Response::new(Full::new(body.clone()));
                match &template {
                    Some(template) => *response.headers_mut() = HeaderMap::clone(template),
                    None => {
                        response
                            .headers_mut()
                            .insert(CONTENT_TYPE, content_type.clone());
                    }
                }
                async move { Ok::<_, Infallible>(response) }
            });
            // Errors here are the client's (reset, garbage): nothing to do but drop it.
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
