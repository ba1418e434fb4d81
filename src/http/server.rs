//! The server: accepts connections, serves each with hyper's HTTP/1.1 connection, and
//! shuts down gracefully.
//!
//! In the mini-redis style, [`run`] takes an already-bound listener, the shared
//! [`State`] and a shutdown future, so the binary and the tests run the very same code:
//! tests bind `127.0.0.1:0` and talk to the real server over a real socket.
//!
//! ```no_run
//! # async fn example(state: std::sync::Arc<tldsnap::http::server::State>) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! tldsnap::http::server::run(listener, state, async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await
//! # }
//! ```
//!
//! Connection handling:
//! - At most [`Config::max_connections`] connections are served at once. The accept
//!   loop takes a permit from a semaphore *before* accepting, so connections past the
//!   limit wait in the kernel's listen backlog instead of being accepted and dropped.
//! - A per-connection watchdog enforces [`Config::header_read_timeout`]: it wakes once
//!   per timeout period and closes the connection if no request head arrived in the
//!   whole period and none is being answered. A slow head (slow-loris) or an idle
//!   keep-alive connection is therefore closed between one and two periods after its
//!   last request, and idle clients do not hold permits forever. (hyper's own
//!   `header_read_timeout` does the same per request head, but arms and drops a timer
//!   for every request: about 7% of a request's instructions, see
//!   `docs/PERFORMANCE.md`. The watchdog costs one timer per connection per period.)
//! - Keep-alive and pipelining are on; `pipeline_flush` batches the answers to pipelined
//!   requests into one write.
//! - On shutdown the listener is closed, every connection is told to finish the request
//!   it is serving and close, and `run` returns once all have closed (or after
//!   [`Config::drain_timeout`]).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, watch};

use super::api;
use super::metrics::{ConnectionError, Metrics};
use super::router::ROUTE_COUNT;
use crate::access::Access;
use crate::store::Store;

/// Server settings. [`Config::default`] gives the values `tldsnap serve` uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base of `website_url` in registrar listings, without a trailing slash. Must be
    /// JSON-safe: see [`validate_public_url`]. Default `https://tldsnap.dev`.
    pub public_url: String,
    /// Connections served at once; more wait in the listen backlog. Default 1024, well
    /// under the usual 65,536 open files, leaving room for snapshot maps and logs.
    pub max_connections: usize,
    /// Time allowed to send a request head, and to stay idle between keep-alive
    /// requests. Default 10 s: generous for a real client, short for a slow-loris one.
    /// Enforced by a watchdog that looks once per period, so a connection is closed
    /// between one and two periods after its last answer.
    pub header_read_timeout: Duration,
    /// Longest request target (path and query) answered; longer gets 414. Default
    /// 8 KiB: 100 TLDs of 63 characters, percent-encoded, still fit.
    pub max_url_bytes: usize,
    /// Largest header section answered (names + values); larger gets 431. Default
    /// 16 KiB.
    pub max_header_bytes: usize,
    /// hyper's read buffer: a request head larger than this is refused by hyper itself
    /// (a bare 431 and a close). Default 64 KiB: above both limits, so they answer with
    /// a problem first; it bounds per-connection memory.
    pub max_buf_size: usize,
    /// Most header fields in a request (hyper answers 431 past it). Default 100.
    pub max_headers: usize,
    /// How long shutdown waits for in-flight requests. Default 10 s.
    pub drain_timeout: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            public_url: DEFAULT_PUBLIC_URL.to_owned(),
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            max_url_bytes: 8 * 1024,
            max_header_bytes: 16 * 1024,
            max_buf_size: 64 * 1024,
            max_headers: 100,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// `--public-url` when not given.
pub const DEFAULT_PUBLIC_URL: &str = crate::query::DEFAULT_PUBLIC_URL;

/// Checks a `--public-url`: `http://` or `https://`, no spaces, quotes, backslashes or
/// control characters (it is copied into JSON bodies as is), at most 512 bytes.
/// Returns it without trailing slashes.
pub fn validate_public_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| format!("--public-url {url:?} must start with http:// or https://"))?;
    if rest.is_empty() {
        return Err(format!("--public-url {url:?} has no host"));
    }
    if trimmed.len() > 512 {
        return Err("--public-url is longer than 512 bytes".to_owned());
    }
    if let Some(c) = trimmed
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\\' | '<' | '>'))
    {
        return Err(format!(
            "--public-url {url:?} contains {c:?}, which is not allowed in a URL here"
        ));
    }
    Ok(trimmed.to_owned())
}

/// Everything the request path shares: one per server.
pub struct State {
    /// The snapshot being served.
    pub store: Arc<Store>,
    /// Keys, plans, rate limits and credits.
    pub access: Arc<Access>,
    /// Request and connection counters.
    pub metrics: Metrics,
    /// Settings.
    pub config: Config,
    /// Size of each route's last answer, to reserve the next body buffer in one go.
    pub(crate) body_size_hints: [AtomicUsize; ROUTE_COUNT],
}

impl State {
    /// State for a server over `store` and `access`.
    pub fn new(store: Arc<Store>, access: Arc<Access>, config: Config) -> State {
        State {
            store,
            access,
            metrics: Metrics::new(),
            config,
            body_size_hints: std::array::from_fn(|_| AtomicUsize::new(0)),
        }
    }
}

/// Serves connections from `listener` until `shutdown` resolves, then drains: stops
/// accepting, lets each connection finish the request it is serving, and returns when
/// all are closed (or after [`Config::drain_timeout`]).
///
/// Errors from single connections (a reset, a malformed request, a timeout) end that
/// connection only. Accept errors (for example, out of file descriptors) are logged
/// and retried after a short pause; `run` does not give up on them.
pub async fn run(
    listener: TcpListener,
    state: Arc<State>,
    shutdown: impl Future,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(state.config.max_connections.max(1)));
    let mut builder = http1::Builder::new();
    builder
        // No hyper timer: the header read timeout is the connection watchdog's (see
        // `serve`), so hyper arms no timer per request.
        .keep_alive(true)
        // A client that shuts down its write side after the request (`nc -N`, some
        // proxies) still gets the answer.
        .half_close(true)
        .pipeline_flush(true)
        .max_buf_size(state.config.max_buf_size.max(8192))
        .max_headers(state.config.max_headers);
    let builder = Arc::new(builder);
    // Tells connections to finish up; `true` once shutdown begins.
    let (drain_tx, drain_rx) = watch::channel(false);
    // Each connection holds a sender; `recv` returns `None` once all have dropped theirs.
    let (closed_tx, mut closed_rx) = mpsc::channel::<()>(1);

    tokio::pin!(shutdown);
    let mut backoff = Duration::from_millis(5);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break, // the semaphore is never closed
            },
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    if !is_connection_error(&err) {
                        eprintln!("tldsnap: accept failed: {err}; retrying in {backoff:?}");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(1));
                    }
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        backoff = Duration::from_millis(5);
        let state = Arc::clone(&state);
        let builder = Arc::clone(&builder);
        let drain = drain_rx.clone();
        let closed = closed_tx.clone();
        tokio::spawn(async move {
            serve(stream, peer, &state, &builder, drain).await;
            drop(permit);
            drop(closed);
        });
    }

    // Stop accepting: new connections are refused from here on.
    drop(listener);
    let _ = drain_tx.send(true);
    drop(closed_tx);
    let drained = tokio::time::timeout(state.config.drain_timeout, closed_rx.recv()).await;
    if drained.is_err() {
        eprintln!(
            "tldsnap: shutdown: connections still open after {:?}; closing them",
            state.config.drain_timeout
        );
    }
    Ok(())
}

/// Serves one connection until the client closes it, an error ends it, or a drain
/// finishes it.
async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    state: &Arc<State>,
    builder: &http1::Builder,
    drain: watch::Receiver<bool>,
) {
    // Answers are small and written whole: send them at once.
    let _ = stream.set_nodelay(true);
    // Counts the connection as open until this function ends, however it ends.
    let _open = OpenConnection::new(state);
    let connection = Arc::new(api::Connection::new(peer.ip().to_canonical()));
    let service_state = Arc::clone(state);
    let service_connection = Arc::clone(&connection);
    let service = service_fn(move |req| {
        let state = Arc::clone(&service_state);
        let connection = Arc::clone(&service_connection);
        async move { Ok::<_, Infallible>(api::handle(&state, req, &connection).await) }
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    // The drain signal and the watchdog live in a task of their own: this task is woken
    // for every request, and polling them here each time (a `watch` and an `Interval`
    // in a `select!`, or a channel) cost 200-700 instructions a request. What it polls
    // instead is one atomic word of flags that the control task raises.
    let flags = Arc::new(Flags::default());
    let mut raised = FlagsRx::new(Arc::clone(&flags));
    let _control = AbortOnDrop(tokio::spawn(control(
        drain,
        Arc::clone(&connection),
        state.config.header_read_timeout,
        flags,
    )));
    loop {
        tokio::select! {
            biased;
            // Errors here are the client's (reset, malformed head); hyper has already
            // answered what could be answered. Count them and close.
            result = conn.as_mut() => {
                if let Err(err) = result {
                    state.metrics.connection_error(classify(&err));
                }
                break;
            }
            new = std::future::poll_fn(|cx| raised.poll_raised(cx)) => {
                if new & Flags::IDLE != 0 {
                    state.metrics.connection_error(ConnectionError::Timeout);
                    break;
                }
                if new & Flags::DRAIN != 0 {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Ends a task when dropped: the control task ends with its connection.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Flags that a connection's control task raises for the connection's task: a word
/// and the waker of the task to wake. Raised flags stay raised.
#[derive(Debug, Default)]
struct Flags {
    bits: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl Flags {
    /// Shutdown began: finish the request being served, then close.
    const DRAIN: u8 = 1;
    /// The watchdog found no progress for a whole period: close now.
    const IDLE: u8 = 2;

    fn raise(&self, flag: u8) {
        self.bits.fetch_or(flag, Ordering::Release);
        let waker = self.waker.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(waker) = waker.as_ref() {
            waker.wake_by_ref();
        }
    }
}

/// The connection task's side of [`Flags`].
#[derive(Debug)]
struct FlagsRx {
    flags: Arc<Flags>,
    /// Flags already returned.
    seen: u8,
    /// The waker last registered, to see without the lock that it is still the one.
    registered: Option<Waker>,
}

impl FlagsRx {
    fn new(flags: Arc<Flags>) -> FlagsRx {
        FlagsRx {
            flags,
            seen: 0,
            registered: None,
        }
    }

    /// Ready with the flags raised since the last time it was ready. The common case,
    /// nothing raised and the same task polling, is one atomic load and a pointer
    /// comparison.
    fn poll_raised(&mut self, cx: &mut Context<'_>) -> Poll<u8> {
        let new = self.flags.bits.load(Ordering::Acquire) & !self.seen;
        if new != 0 {
            self.seen |= new;
            return Poll::Ready(new);
        }
        if !self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            let waker = cx.waker().clone();
            *self.flags.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(waker.clone());
            self.registered = Some(waker);
            // A flag raised before the waker was in place woke nobody: look again.
            let new = self.flags.bits.load(Ordering::Acquire) & !self.seen;
            if new != 0 {
                self.seen |= new;
                return Poll::Ready(new);
            }
        }
        Poll::Pending
    }
}

/// The control task of one connection: forwards the drain signal, and runs the
/// watchdog that enforces [`Config::header_read_timeout`]. Aborted when the connection
/// closes; ends by itself once it has raised [`Flags::IDLE`].
async fn control(
    mut drain: watch::Receiver<bool>,
    connection: Arc<api::Connection>,
    period: Duration,
    flags: Arc<Flags>,
) {
    let mut draining = *drain.borrow_and_update();
    if draining {
        flags.raise(Flags::DRAIN);
    }
    let mut watchdog = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    watchdog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_stamp = connection.stamp();
    loop {
        tokio::select! {
            changed = drain.changed(), if !draining => {
                draining = true;
                if changed.is_ok() {
                    flags.raise(Flags::DRAIN);
                }
            }
            _ = watchdog.tick() => {
                // No request head arrived during a whole period and none is being
                // answered: the client is idle or sending its head too slowly.
                let stamp = connection.stamp();
                if stamp == last_stamp && !api::Connection::is_answering(stamp) {
                    flags.raise(Flags::IDLE);
                    return;
                }
                last_stamp = stamp;
            }
        }
    }
}

/// Keeps `tldsnap_http_connections_open` right even if a connection task unwinds.
struct OpenConnection<'a>(&'a State);

impl<'a> OpenConnection<'a> {
    fn new(state: &'a State) -> OpenConnection<'a> {
        state.metrics.connection_opened();
        OpenConnection(state)
    }
}

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.metrics.connection_closed();
    }
}

fn classify(err: &hyper::Error) -> ConnectionError {
    if err.is_timeout() {
        ConnectionError::Timeout
    } else if err.is_parse() || err.is_parse_too_large() || err.is_parse_version_h2() {
        ConnectionError::Parse
    } else if err.is_incomplete_message() {
        ConnectionError::Incomplete
    } else {
        ConnectionError::Other
    }
}

/// Accept errors that concern one incoming connection only (it was reset before we
/// took it): retry at once.
fn is_connection_error(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_url_rules() {
        assert_eq!(
            validate_public_url("https://tldsnap.dev/").unwrap(),
            "https://tldsnap.dev"
        );
        assert_eq!(
            validate_public_url("http://localhost:8080").unwrap(),
            "http://localhost:8080"
        );
        for bad in [
            "tldsnap.dev",
            "https://",
            "https://a\"b",
            "https://a b",
            "https://a\\b",
            "ftp://x",
            "https://x\n",
        ] {
            assert!(validate_public_url(bad).is_err(), "{bad}");
        }
    }
}
