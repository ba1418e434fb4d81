//! Connections: accept, per-address and global limits, idle eviction, keep-alive
//! watchdog, graceful drain. This module knows HTTP/1.1 framing (through hyper) and a
//! [`Handler`]; it knows nothing of routes, keys, snapshots or metrics. Request handling
//! lives above it, in [`crate::api`].
//!
//! In the mini-redis style, [`run`] takes an already-bound listener, the handler and a
//! shutdown future, so the binary and the tests run the very same code: tests bind
//! `127.0.0.1:0` and talk to the real server over a real socket.
//!
//! ```no_run
//! # async fn example(state: std::sync::Arc<tldsnap::api::State>) -> std::io::Result<()> {
//! use tldsnap::http::server::{self, Config};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server::run(listener, state, Config::default(), async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await
//! # }
//! ```
//!
//! # Connection handling
//!
//! - **Limits.** At most [`Config::max_connections`] connections are served at once,
//!   and at most [`Config::max_connections_per_address`] from one client address. A
//!   connection over the per-address cap is answered at once with `429
//!   too_many_connections`; one that finds the server full makes room by closing the
//!   connection that has been idle the longest (a keep-alive connection between
//!   requests, one that never sent a request, or one whose request waits for a body
//!   the client has not sent: [`BodyWait`]); only when every connection is busy
//!   answering is it answered `503 server_busy`. Refusals carry `Retry-After: 1` and a
//!   problem body ([`Handler::refusal`]). So one address that opens connections as fast
//!   as they close cannot make other clients wait: it holds at most its cap, and idle
//!   connections give way to new ones.
//! - **Watchdog.** One clock task per server enforces [`Config::idle_timeout`] for
//!   every connection: every 100 ms (four times a period, for a period under 400 ms) it
//!   looks at each connection's slot and closes a connection on which no request head
//!   arrived and no answer ended for a whole period, unless one is being answered. A
//!   slow head (slow-loris) or an idle keep-alive connection is therefore closed within
//!   one step of the clock after a whole period since its last request (at the default
//!   10 s, within 100 ms of its deadline). The clock runs on the runtime that called [`run`] or
//!   [`run_threads`] (so the serving threads of [`run_threads`] arm no timer at all).
//!   A connection costs no task and no timer of its own: a control task with an
//!   `Interval` per connection, the design before this one, cost ~2,400 instructions
//!   and 0.6 KB per connection (`docs/PERFORMANCE.md`, "One clock for every
//!   connection"). (hyper's own `header_read_timeout` does the watchdog's work per
//!   request head, but arms and drops a timer for every request: about 7% of a
//!   request's instructions.)
//! - **Clients gone from a streamed or a waiting answer.** hyper does not read a
//!   connection while an answer streams (an event stream, say), nor while the handler
//!   of its request waits (on a webhook receiver, a registry, Redis): it may not, since
//!   a client that shuts down only its sending side after its request (`half_close`)
//!   must still get its answer. So once a second the clock also looks, with one `poll`
//!   that does not wait, at the sockets of the connections whose answer streams or has
//!   waited for a second or more, and closes those whose client closed its end or reset
//!   it (`clients_gone`). Closing drops the handler's future, and with it the work it
//!   waits on (an outbound request is cancelled): a client that left is noticed within
//!   a second (a stream) or two (a waiting answer), and holds neither its connection
//!   nor the work it asked for. A client that shuts down only its sending side during
//!   a streamed answer, or after an answer has waited a second, is taken as gone (as
//!   nginx takes a client that closes while its upstream answers); an answer ready
//!   within a second is never cut. The watch is armed only by a handler's future that
//!   returned `Pending` (one store of the clock's reading); answers made at once never
//!   touch it, no look is taken when nothing streams or waits, and none on a request's
//!   path.
//! - **Bounded output.** Keep-alive and pipelining are on, but hyper's
//!   `pipeline_flush` is off: with it on, hyper queues the answers to pipelined requests
//!   without bound while the client keeps sending and never reads (one connection took
//!   the process from 37 MB to 491 MB). With it off, hyper stops reading the next
//!   request until the previous answer fits in its write buffer
//!   ([`Config::max_buf_size`]), so a connection's unsent output is bounded by that
//!   buffer plus one answer, and the socket's own buffers.
//! - **One write an answer.** hyper hands an answer's head and body over as two
//!   buffers for one `writev`; `Io` copies them into one per-thread buffer and sends
//!   them with one `send` when they come to 4 KiB or less (`COALESCE_MAX`), which costs
//!   the kernel less. hyper's own way to one write (`writev(false)`) would leave every
//!   connection a write buffer as large as its largest answer.
//! - **Unparsable requests.** hyper answers a request head it cannot parse (garbage,
//!   HTTP/0.9, a broken header, conflicting `Content-Length`s, a request target or head
//!   past its limits) with a bare `400`, `414` or `431` without a body, and closes; an
//!   HTTP/2 preface gets nothing. The connection's I/O object (`Io`) recognises that
//!   bare answer as hyper writes it and holds it back; once the connection has ended,
//!   the answer of [`Handler::unparsable`] (the same status, with a problem body) is
//!   written on the socket in its place. Answers to parsed requests only pass one
//!   comparison of their last bytes on the way out.
//! - **Drain.** On shutdown the listener is closed, every connection is told to finish
//!   the request it is serving and close, and `run` returns once all have closed (or
//!   after [`Config::drain_timeout`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, watch};

use super::body::Body;

/// Connection settings. [`Config::default`] gives the values `tldsnap serve` uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Connections served at once. Default 1024, well under the usual 65,536 open
    /// files, leaving room for snapshot maps and logs.
    pub max_connections: usize,
    /// Connections served at once from one client address (IPv4-mapped IPv6 addresses
    /// count as their IPv4 address). Default 256: a quarter of the server, so one
    /// address can never take it all; a proxy or NAT in front of many users should be
    /// given more (`--max-connections-per-address`).
    pub max_connections_per_address: usize,
    /// Time allowed to send a request head, and to stay idle between keep-alive
    /// requests. Default 10 s: generous for a real client, short for a slow-loris one.
    /// Enforced by the server's clock, which looks at every connection every 100 ms
    /// (four times a period, for a period under 400 ms), so a connection is closed
    /// within one such step after a whole period since its last request or answer.
    pub idle_timeout: Duration,
    /// hyper's read buffer and write-buffer bound: a request head larger than this is
    /// refused by hyper itself, and answers stop being produced for a connection whose
    /// unsent output exceeds it. Default 64 KiB.
    pub max_buf_size: usize,
    /// Most header fields in a request (hyper answers 431 past it). Default 100.
    pub max_headers: usize,
    /// How long shutdown waits for in-flight requests. Default 10 s.
    pub drain_timeout: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_connections: 1024,
            max_connections_per_address: 256,
            idle_timeout: Duration::from_secs(10),
            max_buf_size: 64 * 1024,
            max_headers: 100,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// Why a connection was refused before any request was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its address already holds [`Config::max_connections_per_address`] connections.
    PerAddress,
    /// The server is full and every connection is busy answering.
    Full,
}

/// A request head hyper could not parse, answered by the connection layer with
/// [`Handler::unparsable`] before it closes the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unparsable {
    /// Not an HTTP/1.1 request: a broken request line or header, HTTP/0.9, conflicting
    /// `Content-Length`s, TLS or an HTTP/2 preface on this port (400). The text says
    /// what, for a person.
    Malformed(String),
    /// A request target longer than hyper reads (414).
    UriTooLong,
    /// More header fields, or more bytes of head, than hyper reads (431).
    HeadTooLarge {
        /// [`Config::max_buf_size`].
        max_bytes: usize,
        /// [`Config::max_headers`].
        max_headers: usize,
    },
}

/// How a connection ended, or why it was never served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionError {
    /// The request head did not arrive within the idle timeout (or the connection sat
    /// idle that long).
    Timeout,
    /// The bytes were not HTTP/1.1 or exceeded hyper's limits.
    Parse,
    /// The client went away mid-message (or closed its end during a streamed answer,
    /// or while its answer waited).
    Incomplete,
    /// Anything else (I/O errors, resets).
    Other,
    /// Closed while idle to make room for a new connection on a full server.
    Evicted,
    /// Refused at accept: [`Refusal::PerAddress`].
    RefusedPerAddress,
    /// Refused at accept: [`Refusal::Full`].
    RefusedFull,
}

/// What the connection layer reports to the handler, for its metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// A connection was accepted and will be served.
    Opened,
    /// A served connection ended (after [`ConnectionEvent::Error`], if any).
    Closed,
    /// A connection ended with an error, or was refused.
    Error(ConnectionError),
}

/// Request handling, as the connection layer sees it.
pub trait Handler: Send + Sync + 'static {
    /// What the requests of one connection share (the client's address, caches).
    type Connection: Send + Sync + 'static;

    /// The context of a new connection from `peer`.
    fn connect(&self, peer: SocketAddr) -> Self::Connection;

    /// The answer to a request that waits (on a store, a registry, a body): a future
    /// that owns what it needs.
    type Later: Future<Output = Response<Body>> + Send + Unpin + 'static;

    /// Answers one request. Never fails: every error is a response. An answer that
    /// needs no waiting is given at once ([`Reply::Now`]): hyper then keeps the finished
    /// response, not a future of the handling that it would move into its box.
    fn handle(
        this: &Arc<Self>,
        req: Request<Incoming>,
        conn: &Arc<Self::Connection>,
    ) -> Reply<Self::Later>;

    /// The complete HTTP/1.1 response (status line, headers, body) sent to a
    /// connection refused before any request was read. It must close the connection
    /// (`connection: close`).
    fn refusal(&self, why: Refusal) -> Vec<u8>;

    /// The complete HTTP/1.1 response sent in place of hyper's bare answer to a request
    /// head it could not parse (the same status, with a body), before the connection
    /// closes. It must close the connection (`connection: close`).
    fn unparsable(&self, what: Unparsable) -> Vec<u8>;

    /// Connection-level events, for metrics. The default ignores them.
    fn event(&self, event: ConnectionEvent) {
        let _ = event;
    }

    /// Called once when shutdown begins, before connections are told to finish: the
    /// handler ends the answers that would otherwise never finish (streamed bodies),
    /// so the drain ends them cleanly instead of cutting them at the drain timeout.
    /// The default does nothing.
    fn draining(&self) {}
}

/// What [`Handler::handle`] gives back.
pub enum Reply<F> {
    /// The answer, made while the request was handed over.
    Now(Response<Body>),
    /// The answer, once the future resolves.
    Later(F),
}

/// Refused connections being answered at once; past this, a refused connection is
/// closed without an answer (a flood is not owed one).
const MAX_REFUSALS_IN_FLIGHT: usize = 256;

/// The longest step of the server's clock ([`Shared::start_clock`]): idle times closer
/// than a step are equal for eviction. The step is also at most a quarter of the idle
/// timeout, so a connection is closed within a quarter period of its deadline.
const TICK: Duration = Duration::from_millis(100);

/// How often the clock looks whether the clients of streamed answers, and of answers
/// that have waited at least this long, are still there ([`clients_gone`]): a stream's
/// client that left is noticed within a second, a waiting answer's within two. With
/// 5,000 idle event streams the server's CPU went from 1.0% of a core to 1.6% with a
/// look every second, and to 4.0% with one every 100 ms (`docs/PERFORMANCE.md`).
const GONE_LOOK: Duration = Duration::from_secs(1);

/// How long a refused connection's answer may take to be sent and its request drained.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Serves connections from `listener` until `shutdown` resolves, then drains: stops
/// accepting, lets each connection finish the request it is serving, and returns when
/// all are closed (or after [`Config::drain_timeout`]).
///
/// Errors from single connections (a reset, a malformed request, a timeout) end that
/// connection only. Accept errors (for example, out of file descriptors) are logged
/// and retried after a short pause; `run` does not give up on them.
pub async fn run<H: Handler>(
    listener: TcpListener,
    handler: Arc<H>,
    config: Config,
    shutdown: impl Future,
) -> io::Result<()> {
    let shared = Shared::new(handler, &config);
    let _clock = shared.start_clock();
    // Each connection holds a sender; `recv` returns `None` once all have dropped theirs.
    let (closed_tx, closed_rx) = mpsc::channel::<()>(1);
    accept(listener, &shared, &closed_tx, shutdown).await;
    // Stop accepting (the listener is closed): new connections are refused from here on.
    shared.handler.draining();
    // Tells every connection to finish up.
    shared.table.drain();
    drop(closed_tx);
    wait_closed(closed_rx, config.drain_timeout).await;
    Ok(())
}

/// Serves connections from several listeners bound to one address with `SO_REUSEPORT`
/// ([`reuseport_listeners`]), each on a thread of its own running a `current_thread`
/// runtime (thread per core: the kernel spreads new connections over the listeners, and
/// a connection lives on the thread that accepted it, with no work stealing). The limits
/// of [`Config`] hold for the server as a whole: the connection table is shared.
///
/// Runs until `shutdown` resolves, then drains every thread as [`run`] does. The calling
/// runtime keeps only the idle-eviction clock; the handler's own background work stays
/// wherever it was spawned.
pub async fn run_threads<H: Handler>(
    listeners: Vec<std::net::TcpListener>,
    handler: Arc<H>,
    config: Config,
    shutdown: impl Future,
) -> io::Result<()> {
    let shared = Arc::new(Shared::new(handler, &config));
    let _clock = shared.start_clock();
    // Stops the accept loops; `true` once shutdown begins.
    let (drain_tx, drain_rx) = watch::channel(false);
    // Each serving thread holds a sender until its connections are closed.
    let (done_tx, done_rx) = mpsc::channel::<()>(1);
    for (i, listener) in listeners.into_iter().enumerate() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let shared = Arc::clone(&shared);
        let drain = drain_rx.clone();
        let done = done_tx.clone();
        let drain_timeout = config.drain_timeout;
        std::thread::Builder::new()
            .name(format!("tldsnap-serve-{i}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(err) => {
                            eprintln!("tldsnap: serving thread {i}: {err}");
                            return;
                        }
                    };
                    let (closed_tx, closed_rx) = mpsc::channel::<()>(1);
                    let mut stop = drain.clone();
                    let stop = async move {
                        let _ = stop.wait_for(|draining| *draining).await;
                    };
                    accept(listener, &shared, &closed_tx, stop).await;
                    drop(closed_tx);
                    // This thread's connections are tasks of this runtime: drive them
                    // until they close.
                    wait_closed(closed_rx, drain_timeout).await;
                    drop(done);
                });
            })?;
    }
    drop(done_tx);
    shutdown.await;
    shared.handler.draining();
    let _ = drain_tx.send(true);
    // Connections accepted from here on are told at once (`Table::admit`).
    shared.table.drain();
    // Each thread waits at most the drain timeout; a little more for the thread itself.
    wait_closed(done_rx, config.drain_timeout + Duration::from_secs(1)).await;
    Ok(())
}

/// `n` listeners bound to `addr` with `SO_REUSEPORT` (and `SO_REUSEADDR`), for
/// [`run_threads`]. With port 0 the first listener picks the port and the others bind
/// to the same one. Call it inside a tokio runtime.
pub fn reuseport_listeners(addr: SocketAddr, n: usize) -> io::Result<Vec<std::net::TcpListener>> {
    let mut addr = addr;
    let mut listeners = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.set_reuseport(true)?;
        socket.bind(addr)?;
        let listener = socket.listen(1024)?;
        addr = listener.local_addr()?;
        listeners.push(listener.into_std()?);
    }
    Ok(listeners)
}

/// What the accept loops of one server share.
struct Shared<H> {
    handler: Arc<H>,
    builder: Arc<http1::Builder>,
    table: Arc<Table>,
    refusals: Arc<Semaphore>,
    limits: Limits,
}

impl<H: Handler> Shared<H> {
    fn new(handler: Arc<H>, config: &Config) -> Shared<H> {
        let mut builder = http1::Builder::new();
        builder
            // No hyper timer: the header read timeout is the connection watchdog's (see
            // `serve`), so hyper arms no timer per request.
            .keep_alive(true)
            // A client that shuts down its write side after the request (`nc -N`, some
            // proxies) still gets the answer.
            .half_close(true)
            // Off: see "Bounded output" in the module docs.
            .pipeline_flush(false)
            .max_buf_size(config.max_buf_size.max(8192))
            .max_headers(config.max_headers);
        Shared {
            handler,
            builder: Arc::new(builder),
            table: Arc::new(Table::new(
                config.max_connections.max(1),
                config.max_connections_per_address.max(1),
            )),
            refusals: Arc::new(Semaphore::new(MAX_REFUSALS_IN_FLIGHT)),
            limits: Limits {
                idle_timeout: config.idle_timeout,
                max_head_bytes: config.max_buf_size.max(8192),
                max_headers: config.max_headers,
            },
        }
    }

    /// The server's clock, on the calling runtime, stopped when dropped: it advances
    /// the coarse clock of idle eviction and runs the watchdog of every connection
    /// ([`Table::tick`]), in steps of [`TICK`] or a quarter of the idle timeout,
    /// whichever is shorter.
    fn start_clock(&self) -> AbortOnDrop {
        let table = Arc::clone(&self.table);
        let period = self.limits.idle_timeout.max(Duration::from_millis(4));
        let step = TICK.min(period / 4);
        // A whole period in steps, rounded up: never closed before its deadline.
        let period_ticks = period.as_nanos().div_ceil(step.as_nanos()) as u64;
        let look_ticks = (GONE_LOOK.as_nanos() / step.as_nanos()).max(1) as u64;
        AbortOnDrop(tokio::spawn(async move {
            let mut every = tokio::time::interval_at(tokio::time::Instant::now() + step, step);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                table.tick(period_ticks, look_ticks);
            }
        }))
    }
}

/// Accepts connections from `listener` and spawns a task for each (on the current
/// runtime) until `stop` resolves; then closes the listener. Each connection task holds
/// a clone of `closed` until it ends.
async fn accept<H: Handler>(
    listener: TcpListener,
    shared: &Shared<H>,
    closed: &mpsc::Sender<()>,
    stop: impl Future,
) {
    tokio::pin!(stop);
    let mut backoff = Duration::from_millis(5);
    loop {
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
            _ = &mut stop => break,
        };
        backoff = Duration::from_millis(5);
        let client = peer.ip().to_canonical();
        let slot = match shared.table.admit(client, stream.as_raw_fd()) {
            Ok(slot) => slot,
            Err(why) => {
                shared.handler.event(ConnectionEvent::Error(match why {
                    Refusal::PerAddress => ConnectionError::RefusedPerAddress,
                    Refusal::Full => ConnectionError::RefusedFull,
                }));
                if let Ok(permit) = Arc::clone(&shared.refusals).try_acquire_owned() {
                    let answer = shared.handler.refusal(why);
                    tokio::spawn(async move {
                        refuse(stream, answer).await;
                        drop(permit);
                    });
                }
                continue;
            }
        };
        let handler = Arc::clone(&shared.handler);
        let builder = Arc::clone(&shared.builder);
        let closed = closed.clone();
        let limits = shared.limits;
        // Frees the slot however the connection ends (even if a task unwinds).
        let place = Place {
            table: Arc::clone(&shared.table),
            slot,
        };
        tokio::spawn(async move {
            serve(stream, peer, &handler, &builder, &place, limits).await;
            drop(place);
            drop(closed);
        });
    }
}

/// Waits until every sender of `closed` is dropped, at most `timeout`.
async fn wait_closed(mut closed: mpsc::Receiver<()>, timeout: Duration) {
    if tokio::time::timeout(timeout, closed.recv()).await.is_err() {
        eprintln!("tldsnap: shutdown: connections still open after {timeout:?}; closing them");
    }
}

/// Sends a refused connection its answer, then reads (and drops) what the client sent
/// for a moment before closing, so the close is not a reset that destroys the answer
/// before the client reads it.
async fn refuse(mut stream: TcpStream, answer: Vec<u8>) {
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, async {
        stream.write_all(&answer).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut drained = 0usize;
        while drained < 64 * 1024 {
            match stream.read(&mut sink).await? {
                0 => break,
                n => drained += n,
            }
        }
        io::Result::Ok(())
    })
    .await;
}

/// The settings one connection is served with.
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// [`Config::idle_timeout`].
    idle_timeout: Duration,
    /// hyper's read buffer: the largest request head it reads.
    max_head_bytes: usize,
    /// [`Config::max_headers`].
    max_headers: usize,
}

/// Serves one connection until the client closes it, an error ends it, the watchdog
/// finds it idle, it is evicted, or a drain finishes it.
async fn serve<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    handler: &Arc<H>,
    builder: &http1::Builder,
    place: &Place,
    limits: Limits,
) {
    // Answers are small and written whole: send them at once.
    let _ = stream.set_nodelay(true);
    handler.event(ConnectionEvent::Opened);
    let connection = Arc::new(handler.connect(peer));
    let service_handler = Arc::clone(handler);
    let slot = &place.slot;
    let service_slot = Arc::clone(slot);
    let service_table = Arc::clone(&place.table);
    let service = service_fn(move |mut req: Request<Incoming>| {
        // One task serves the connection, so a plain load and store is enough.
        service_slot
            .stamp
            .store(service_slot.stamp() + 1, Ordering::Relaxed);
        // A request with a body carries the means to say when its handler waits for
        // that body (see `BodyWait`); one without (every GET) carries nothing.
        if !hyper::body::Body::is_end_stream(req.body()) {
            BodyWait::attach(&mut req, &service_slot);
        }
        match H::handle(&service_handler, req, &connection) {
            Reply::Now(mut response) => {
                guard(&mut response, &service_slot, &service_table);
                Served::Now(Some(response))
            }
            Reply::Later(answer) => Served::Later {
                answer,
                slot: Arc::clone(&service_slot),
                table: Arc::clone(&service_table),
            },
        }
    });
    // Not pinned in place (it is `Unpin`): after a parse error its I/O object is taken
    // back to answer on.
    let mut conn = builder.serve_connection(Io::new(stream), service);
    // The drain signal, the watchdog and eviction are the server's ([`Table`]): this
    // task is woken for every request, and polling a `watch` and an `Interval` here
    // each time cost 200-700 instructions a request. What it polls instead is one
    // atomic word of flags that the server's clock, a drain or an eviction raises.
    let mut raised = FlagsRx::new(Arc::clone(slot));
    let mut failed = None;
    loop {
        tokio::select! {
            biased;
            // Errors here are the client's (reset, malformed head). Count them and close;
            // a head hyper could not parse is answered below.
            result = &mut conn => {
                if let Err(err) = result {
                    handler.event(ConnectionEvent::Error(classify(&err)));
                    failed = Some(err);
                }
                break;
            }
            new = std::future::poll_fn(|cx| raised.poll_raised(cx)) => {
                if new & Flags::EVICT != 0 {
                    handler.event(ConnectionEvent::Error(ConnectionError::Evicted));
                    break;
                }
                if new & Flags::IDLE != 0 {
                    handler.event(ConnectionEvent::Error(ConnectionError::Timeout));
                    break;
                }
                if new & Flags::GONE != 0 {
                    handler.event(ConnectionEvent::Error(ConnectionError::Incomplete));
                    break;
                }
                if new & Flags::DRAIN != 0 {
                    Pin::new(&mut conn).graceful_shutdown();
                }
            }
        }
    }
    if let Some(err) = failed {
        let io = conn.into_parts().io;
        if let Some(what) = io.unparsable(&err, limits) {
            // Boxed: its 4 KiB read buffer would otherwise sit in every connection's
            // task for a path taken only after a malformed request.
            Box::pin(refuse(io.inner, handler.unparsable(what))).await;
        }
    }
    handler.event(ConnectionEvent::Closed);
}

/// hyper's bare answers to a request head it could not parse, as it writes them: the
/// status line, then exactly these headers (the date is always 29 bytes), no body.
const BARE_LINES: [(&[u8], Bare); 3] = [
    (b"HTTP/1.1 400 Bad Request", Bare::BadRequest),
    (b"HTTP/1.1 414 URI Too Long", Bare::UriTooLong),
    (
        b"HTTP/1.1 431 Request Header Fields Too Large",
        Bare::HeadTooLarge,
    ),
];
const BARE_HEADERS: &[u8] = b"\r\nconnection: close\r\ncontent-length: 0\r\ndate: ";
const BARE_DATE_LEN: usize = "Sun, 06 Nov 1994 08:49:37 GMT".len();
const BARE_END: &[u8] = b" GMT\r\n\r\n";

/// Which bare answer hyper wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bare {
    BadRequest,
    UriTooLong,
    HeadTooLarge,
}

/// Where hyper's bare answer starts in `buf`, and which it is, when `buf` ends with
/// one. hyper writes it last (nothing follows on the connection), so only the end of
/// a write needs looking at. An answer to a parsed request ends with its body, or for
/// `HEAD` with a head that has a `content-type`: the first comparison sends it on.
#[inline(always)]
fn bare_answer(buf: &[u8]) -> Option<(usize, Bare)> {
    if !buf.ends_with(BARE_END) {
        return None;
    }
    bare_answer_head(buf)
}

/// [`bare_answer`] past its first comparison: heads only (`HEAD` answers, and hyper's
/// bare ones).
#[cold]
#[inline(never)]
fn bare_answer_head(buf: &[u8]) -> Option<(usize, Bare)> {
    let date = buf.len().checked_sub(BARE_DATE_LEN + 4)?;
    let headers = date.checked_sub(BARE_HEADERS.len())?;
    if &buf[headers..date] != BARE_HEADERS {
        return None;
    }
    BARE_LINES.iter().find_map(|(line, bare)| {
        buf[..headers]
            .ends_with(line)
            .then(|| (headers - line.len(), *bare))
    })
}

/// A connection's socket as hyper sees it: reads and writes through [`super::socket`]
/// (tokio's readiness, without the C library's cancellation bookkeeping), except that
/// hyper's bare answer to a head it could not parse is held back (reported written,
/// not sent), so that [`serve`] can send a complete answer in its place.
struct Io {
    inner: TcpStream,
    /// The bare answer held back.
    held: Option<Bare>,
    /// The last read drained the socket (see `socket::poll_recv`).
    drained: bool,
}

impl Io {
    fn new(stream: TcpStream) -> Io {
        Io {
            inner: stream,
            held: None,
            drained: false,
        }
    }

    /// What to answer, in place of what hyper wrote, for the error that ended the
    /// connection: a bare answer held back, or an HTTP/2 preface (hyper writes nothing
    /// for it).
    fn unparsable(&self, err: &hyper::Error, limits: Limits) -> Option<Unparsable> {
        match self.held {
            Some(Bare::BadRequest) => Some(Unparsable::Malformed(err.to_string())),
            Some(Bare::UriTooLong) => Some(Unparsable::UriTooLong),
            Some(Bare::HeadTooLarge) => Some(Unparsable::HeadTooLarge {
                max_bytes: limits.max_head_bytes,
                max_headers: limits.max_headers,
            }),
            None if err.is_parse_version_h2() => Some(Unparsable::Malformed(
                "an HTTP/2 connection preface; this port speaks HTTP/1.1 only".to_owned(),
            )),
            None => None,
        }
    }
}

impl hyper::rt::Read for Io {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the read only writes into these unfilled bytes, never de-initialises
        // one.
        let unfilled = unsafe { buf.as_mut() };
        let this = self.get_mut();
        let n = std::task::ready!(super::socket::poll_recv(
            &this.inner,
            cx,
            unfilled,
            &mut this.drained
        ))?;
        // SAFETY: the read initialised the first `n` of them.
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

/// Writes of up to this many bytes in all that hyper hands over as several buffers (an
/// answer's head and its body) are copied into one and sent with one `send` instead of
/// a `writev`: the kernel's vectored path (importing and checking the list of buffers,
/// the file layer's `write_iter`) costs more than copying a few KiB here. hyper's own
/// remedy (`writev(false)`, which copies every body behind its head) keeps, for the
/// rest of the connection, a write buffer as large as the largest answer it sent;
/// here the copy goes to one buffer per thread and a larger answer goes out as before.
/// docs/PERFORMANCE.md, "Instructions per request".
const COALESCE_MAX: usize = 4096;

thread_local! {
    /// The serving thread's buffer for [`COALESCE_MAX`]'s copies.
    static COALESCED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl hyper::rt::Write for Io {
    #[inline]
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some((start, bare)) = bare_answer(buf) {
            if start > 0 {
                // What precedes it first; hyper comes back with the rest.
                return super::socket::poll_send(&self.inner, cx, &buf[..start]);
            }
            self.held = Some(bare);
            return Poll::Ready(Ok(buf.len()));
        }
        super::socket::poll_send(&self.inner, cx, buf)
    }

    #[inline]
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some((last, before)) = bufs.split_last()
            && let Some((start, bare)) = bare_answer(last)
        {
            if before.iter().any(|b| !b.is_empty()) {
                return super::socket::poll_send_vectored(&self.inner, cx, before);
            }
            if start > 0 {
                return super::socket::poll_send(&self.inner, cx, &last[..start]);
            }
            self.held = Some(bare);
            return Poll::Ready(Ok(last.len()));
        }
        // An answer's head and a small body: copied together and sent with one `send`
        // (see `COALESCE_MAX`).
        if bufs.len() > 1 {
            let total: usize = bufs.iter().map(|b| b.len()).sum();
            if total <= COALESCE_MAX {
                return COALESCED.with_borrow_mut(|joined| {
                    joined.clear();
                    for b in bufs {
                        joined.extend_from_slice(b);
                    }
                    super::socket::poll_send(&self.inner, cx, joined)
                });
            }
        }
        super::socket::poll_send_vectored(&self.inner, cx, bufs)
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        true
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A socket holds nothing back to flush.
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.held.is_some() {
            // hyper ends the connection after its bare answer: the write side stays
            // open for the answer sent in its place.
            return Poll::Ready(Ok(()));
        }
        tokio::io::AsyncWrite::poll_shutdown(Pin::new(&mut self.inner), cx)
    }
}

/// The future hyper keeps for a request: the answer itself when the handler gave it at
/// once (a few hundred bytes, where a future of the whole handling was kilobytes that
/// hyper wrote into its box for every request), or the handler's future.
enum Served<F> {
    Now(Option<Response<Body>>),
    Later {
        answer: F,
        slot: Arc<Slot>,
        table: Arc<Table>,
    },
}

impl<F: Future<Output = Response<Body>> + Unpin> Future for Served<F> {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Served::Now(response) => Poll::Ready(Ok(response
                .take()
                .expect("hyper polls a request's future only until it is ready"))),
            Served::Later {
                answer,
                slot,
                table,
            } => match Pin::new(answer).poll(cx) {
                Poll::Ready(mut response) => {
                    slot.waiting_since.store(0, Ordering::Relaxed);
                    guard(&mut response, slot, table);
                    Poll::Ready(Ok(response))
                }
                Poll::Pending => {
                    // The first wait arms the watch for a client that leaves
                    // (`Table::tick`); the clock's reading is never 0.
                    if slot.waiting_since.load(Ordering::Relaxed) == 0 {
                        slot.waiting_since
                            .store(table.ticks.load(Ordering::Relaxed), Ordering::Relaxed);
                    }
                    Poll::Pending
                }
            },
        }
    }
}

/// The answer, marked answered: at once, or for a streamed body when the body ends (or
/// the client goes away). Until then the watchdog must not take the connection for
/// idle, nor eviction for a free place.
/// (In place: a response moved into a function and back is copied twice.)
fn guard(response: &mut Response<Body>, slot: &Arc<Slot>, table: &Arc<Table>) {
    if response.body().is_streamed() {
        slot.streaming.store(true, Ordering::Relaxed);
        let answered = Answered {
            slot: Arc::clone(slot),
            table: Arc::clone(table),
        };
        let body = std::mem::take(response.body_mut());
        *response.body_mut() = body.with_guard(answered);
    } else {
        mark_answered(slot, table);
    }
}

/// The connection is idle again from now.
fn mark_answered(slot: &Slot, table: &Table) {
    slot.stamp.store(slot.stamp() + 1, Ordering::Relaxed);
    slot.active_tick
        .store(table.ticks.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Marks the end of an answer when dropped: the connection is idle again from then.
struct Answered {
    slot: Arc<Slot>,
    table: Arc<Table>,
}

impl Drop for Answered {
    fn drop(&mut self) {
        self.slot.streaming.store(false, Ordering::Relaxed);
        mark_answered(&self.slot, &self.table);
    }
}

/// The connection layer's record of one served connection.
#[derive(Debug)]
struct Slot {
    /// Its place in the [`Table`].
    id: u64,
    /// The client's address.
    client: IpAddr,
    /// The connection's socket, for the watchdog's look at whether the client of a
    /// streamed answer has gone ([`Table::tick`]). Only a number: the socket is the
    /// connection task's, and may be closed (the number even reused) by the time the
    /// watchdog looks, which `poll` tolerates (see [`clients_gone`]).
    fd: RawFd,
    /// Bumped when a request starts being answered and again when its answer is ready:
    /// odd while one is being answered. The watchdog ([`Table::tick`]) reads it to tell
    /// an idle or slow client from a busy one.
    stamp: AtomicU64,
    /// The table's clock when the connection was accepted or its last answer was
    /// ready: the smaller, the longer the connection has been idle. Eviction picks the
    /// smallest.
    active_tick: AtomicU64,
    /// The request being answered waits for the client to send its body
    /// ([`BodyWait::waiting`]): eviction may take the connection as if it were idle.
    awaiting_body: AtomicBool,
    /// The answer being sent streams ([`guard`]): the watchdog looks whether its
    /// client is still there.
    streaming: AtomicBool,
    /// The clock's reading ([`Table::ticks`], never 0) when the handler's future of the
    /// request being answered first returned `Pending`; 0 when none waits. Once it has
    /// waited a look's interval, the watchdog looks whether its client is still there.
    waiting_since: AtomicU64,
    /// Flags raised for the connection's task.
    flags: Flags,
}

impl Slot {
    fn stamp(&self) -> u64 {
        self.stamp.load(Ordering::Relaxed)
    }

    fn is_answering(stamp: u64) -> bool {
        stamp % 2 == 1
    }

    /// Whether the clock's look at `now` ([`Table::tick`]) asks whether the client is
    /// still there: the answer streams, or its handler has waited `look_every` ticks or
    /// more (an answer ready sooner is never cut, even for a client that shut down its
    /// sending side after its request).
    fn is_watched_for_gone(&self, now: u64, look_every: u64) -> bool {
        if self.streaming.load(Ordering::Relaxed) {
            return true;
        }
        let since = self.waiting_since.load(Ordering::Relaxed);
        since != 0 && now.saturating_sub(since) >= look_every
    }

    /// Whether eviction may close this connection to make room: nothing is being
    /// answered on it, or what is being answered waits for the client's body.
    fn is_evictable(&self) -> bool {
        !Slot::is_answering(self.stamp()) || self.awaiting_body.load(Ordering::Relaxed)
    }
}

/// Carried by a request that has a body (in its extensions): lets the handler tell the
/// connection layer while it waits for that body. A connection whose request waits for
/// the client is the client's to finish, so a full server may close it to make room as
/// it closes an idle one: a flood of requests whose bodies never come cannot hold every
/// place (each is also cut off by the handler's own body deadline, `--body-timeout`).
#[derive(Clone, Debug)]
pub struct BodyWait(Arc<Slot>);

impl BodyWait {
    /// Puts one in the extensions of `req`. Out of line: requests with a body are the
    /// few, and the service closure inlined into hyper's dispatcher stays as small as
    /// it was without this.
    #[cold]
    #[inline(never)]
    fn attach(req: &mut Request<Incoming>, slot: &Arc<Slot>) {
        req.extensions_mut().insert(BodyWait(Arc::clone(slot)));
    }

    /// Marks the request as waiting for its body until the guard is dropped.
    pub fn waiting(&self) -> BodyWaitGuard {
        self.0.awaiting_body.store(true, Ordering::Relaxed);
        BodyWaitGuard(Arc::clone(&self.0))
    }
}

/// The mark of [`BodyWait::waiting`], taken off when dropped.
#[derive(Debug)]
pub struct BodyWaitGuard(Arc<Slot>);

impl Drop for BodyWaitGuard {
    fn drop(&mut self) {
        self.0.awaiting_body.store(false, Ordering::Relaxed);
    }
}

/// Every served connection, and the count per client address.
#[derive(Debug)]
struct Table {
    max: usize,
    per_address: usize,
    inner: Mutex<TableInner>,
    /// A coarse clock for [`Slot::active_tick`], in steps since start, advanced by the
    /// server's clock task ([`Shared::start_clock`]).
    ticks: AtomicU64,
}

#[derive(Debug, Default)]
struct TableInner {
    next_id: u64,
    /// Connections that count against the limits (evicted ones no longer do).
    slots: HashMap<u64, Watched>,
    by_address: HashMap<IpAddr, usize>,
    /// Shutdown began: every connection, and every one accepted from now on, is told
    /// to finish up.
    draining: bool,
}

/// A connection as the watchdog sees it.
#[derive(Debug)]
struct Watched {
    slot: Arc<Slot>,
    /// Its [`Slot::stamp`] when the watchdog last saw it change.
    seen_stamp: u64,
    /// The clock's tick then (or the first tick after the connection was accepted).
    seen_tick: u64,
}

impl Table {
    fn new(max: usize, per_address: usize) -> Table {
        Table {
            max,
            per_address,
            inner: Mutex::new(TableInner::default()),
            ticks: AtomicU64::new(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TableInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new connection from `client`, evicting the longest-idle connection
    /// when the server is full; or why there is none. Runs once per accepted
    /// connection, never per request; the scan for an idle connection runs only when
    /// the server is full.
    fn admit(&self, client: IpAddr, fd: RawFd) -> Result<Arc<Slot>, Refusal> {
        let mut inner = self.lock();
        if inner.by_address.get(&client).copied().unwrap_or(0) >= self.per_address {
            return Err(Refusal::PerAddress);
        }
        if inner.slots.len() >= self.max {
            let idle = inner
                .slots
                .values()
                .map(|w| &w.slot)
                .filter(|s| s.is_evictable())
                .min_by_key(|s| (s.active_tick.load(Ordering::Relaxed), s.id))
                .cloned();
            let Some(victim) = idle else {
                return Err(Refusal::Full);
            };
            inner.remove(&victim);
            victim.flags.raise(Flags::EVICT);
        }
        inner.next_id += 1;
        let now = self.ticks.load(Ordering::Relaxed);
        let slot = Arc::new(Slot {
            id: inner.next_id,
            client,
            fd,
            stamp: AtomicU64::new(0),
            active_tick: AtomicU64::new(now),
            awaiting_body: AtomicBool::new(false),
            streaming: AtomicBool::new(false),
            waiting_since: AtomicU64::new(0),
            flags: Flags::default(),
        });
        if inner.draining {
            slot.flags.raise(Flags::DRAIN);
        }
        let watched = Watched {
            slot: Arc::clone(&slot),
            seen_stamp: 0,
            // Counted from the next tick: the connection came some time after this one.
            seen_tick: now + 1,
        };
        inner.slots.insert(slot.id, watched);
        *inner.by_address.entry(client).or_insert(0) += 1;
        Ok(slot)
    }

    /// One step of the server's clock: advances [`Table::ticks`], and closes every
    /// connection on which no request started and no answer ended during the last
    /// `period` ticks, unless one is being answered (its stamp is odd). Holds the
    /// table's lock for one look at each connection (a few nanoseconds each). Every
    /// `look_every` ticks it then, without the lock, closes every connection whose
    /// answer streams, or has waited `look_every` ticks or more, and whose client has
    /// gone ([`clients_gone`]: one `poll` for all of them, none when nothing streams or
    /// waits).
    fn tick(&self, period: u64, look_every: u64) {
        let now = self.ticks.fetch_add(1, Ordering::Relaxed) + 1;
        let look = now.is_multiple_of(look_every);
        let mut looked_at = Vec::new();
        let mut inner = self.lock();
        for watched in inner.slots.values_mut() {
            let stamp = watched.slot.stamp();
            if stamp != watched.seen_stamp {
                watched.seen_stamp = stamp;
                watched.seen_tick = now;
            } else if !Slot::is_answering(stamp) && now.saturating_sub(watched.seen_tick) >= period
            {
                watched.slot.flags.raise(Flags::IDLE);
                // Told once a period at most, until its task has closed it.
                watched.seen_tick = now;
            }
            if look && watched.slot.is_watched_for_gone(now, look_every) {
                looked_at.push(Arc::clone(&watched.slot));
            }
        }
        drop(inner);
        for slot in clients_gone(&looked_at) {
            slot.flags.raise(Flags::GONE);
        }
    }

    /// Shutdown began: tells every connection to finish the request it is serving and
    /// close, and every connection accepted from now on at once.
    fn drain(&self) {
        let mut inner = self.lock();
        inner.draining = true;
        for watched in inner.slots.values() {
            watched.slot.flags.raise(Flags::DRAIN);
        }
    }
}

impl TableInner {
    /// Takes `slot` out of the counts, once (an evicted slot is removed at eviction and
    /// not again when its connection ends).
    fn remove(&mut self, slot: &Slot) {
        if self.slots.remove(&slot.id).is_none() {
            return;
        }
        if let Some(n) = self.by_address.get_mut(&slot.client) {
            *n -= 1;
            if *n == 0 {
                self.by_address.remove(&slot.client);
            }
        }
    }
}

/// Of the connections whose answer streams or waits, those whose client has closed its
/// end of the connection or reset it: one `poll` of their sockets, which does not wait.
///
/// hyper does not read a connection while an answer streams or its handler waits (it
/// may not: a client that shuts down only its sending side after the request must
/// still get its answer, see `half_close` in [`Shared::new`]), so without this look a
/// client that left is noticed only when a write to it fails, a heartbeat or two later
/// for a stream, and for a waiting answer when it is ready, however long its handler
/// waits. A client that shuts down only its sending side then is taken as gone.
///
/// The socket numbers are the slots' ([`Slot::fd`]); a connection may end, and its
/// number be reused by a new socket, between the look at the table and this call.
/// That is harmless: `poll` only reads state, a closed number is reported
/// `POLLNVAL` (not gone), and a reused one can only mark as gone a slot whose
/// connection has already ended.
fn clients_gone(streaming: &[Arc<Slot>]) -> Vec<&Arc<Slot>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const CLOSED: libc::c_short = libc::POLLRDHUP;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const CLOSED: libc::c_short = 0;
    if streaming.is_empty() {
        return Vec::new();
    }
    let mut fds: Vec<libc::pollfd> = streaming
        .iter()
        .map(|slot| libc::pollfd {
            fd: slot.fd,
            events: CLOSED,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` is a valid, initialised array of `fds.len()` `pollfd`s that lives
    // across the call, and `poll` writes only their `revents`. A timeout of 0 returns
    // at once. The numbers need not be open (a closed one is reported `POLLNVAL`, a
    // negative one ignored); nothing is read from or done to the sockets.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
    if ready <= 0 {
        return Vec::new();
    }
    streaming
        .iter()
        .zip(&fds)
        .filter(|(_, p)| p.revents & (CLOSED | libc::POLLHUP | libc::POLLERR) != 0)
        .map(|(slot, _)| slot)
        .collect()
}

/// A connection's place in the [`Table`], held until dropped.
struct Place {
    table: Arc<Table>,
    slot: Arc<Slot>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.table.lock().remove(&self.slot);
    }
}

/// Ends a task when dropped: the server's clock ends with the server.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Flags that the server (its clock, a drain, an eviction) raises for a connection's
/// task: a word and the waker of the task to wake. Raised flags stay raised.
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
    /// Evicted to make room on a full server: close now.
    const EVICT: u8 = 4;
    /// The client of a streamed or waiting answer closed its end of the connection (or
    /// reset it): close now, dropping the answer's future.
    const GONE: u8 = 8;

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
    slot: Arc<Slot>,
    /// Flags already returned.
    seen: u8,
    /// The waker last registered, to see without the lock that it is still the one.
    registered: Option<Waker>,
}

impl FlagsRx {
    fn new(slot: Arc<Slot>) -> FlagsRx {
        FlagsRx {
            slot,
            seen: 0,
            registered: None,
        }
    }

    /// Ready with the flags raised since the last time it was ready. The common case,
    /// nothing raised and the same task polling, is one atomic load and a pointer
    /// comparison.
    fn poll_raised(&mut self, cx: &mut Context<'_>) -> Poll<u8> {
        let new = self.slot.flags.bits.load(Ordering::Acquire) & !self.seen;
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
            *self
                .slot
                .flags
                .waker
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(waker.clone());
            self.registered = Some(waker);
            // A flag raised before the waker was in place woke nobody: look again.
            let new = self.slot.flags.bits.load(Ordering::Acquire) & !self.seen;
            if new != 0 {
                self.seen |= new;
                return Poll::Ready(new);
            }
        }
        Poll::Pending
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

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    /// A handler that answers every request with an empty body.
    struct Empty;

    impl Handler for Empty {
        type Connection = ();
        type Later = std::future::Ready<Response<Body>>;

        fn connect(&self, _: SocketAddr) {}

        fn handle(_: &Arc<Empty>, _: Request<Incoming>, _: &Arc<()>) -> Reply<Self::Later> {
            Reply::Now(Response::new(Body::default()))
        }

        fn refusal(&self, _: Refusal) -> Vec<u8> {
            Vec::new()
        }

        fn unparsable(&self, _: Unparsable) -> Vec<u8> {
            Vec::new()
        }
    }

    fn raised(slot: &Slot) -> u8 {
        slot.flags.bits.load(Ordering::Acquire)
    }

    /// The look at streamed answers' sockets: a client that shut down its sending side,
    /// closed, or reset the connection is gone; one that is there, or that sent more
    /// bytes, is not; a number that is not open, or none, is not either. (Whether an
    /// answer streams is the table's business: [`Table::tick`] passes only those.)
    #[test]
    fn clients_gone_are_those_that_closed_or_reset() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let table = Table::new(16, 16);
        // Five connections whose server sockets stay open: the clients of 0 and 1 stay
        // (1 sends a byte), 2 shuts down its sending side, 3 closes, 4 resets.
        let (mut clients, mut servers, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            slots.push(table.admit(ip(1), server.as_raw_fd()).unwrap());
            clients.push(Some(client));
            servers.push(server);
        }
        // A number no file has (a closed one is reported `POLLNVAL`), and none.
        slots.push(table.admit(ip(2), 1 << 30).unwrap());
        slots.push(table.admit(ip(2), -1).unwrap());
        let gone = || -> Vec<u64> { clients_gone(&slots).iter().map(|s| s.id).collect() };
        assert_eq!(gone(), Vec::<u64>::new(), "every client is there");
        clients[1].as_mut().unwrap().write_all(b"x").unwrap();
        let client = clients[2].as_ref().unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        drop(clients[3].take());
        socket2::SockRef::from(clients[4].as_ref().unwrap())
            .set_linger(Some(Duration::ZERO))
            .unwrap();
        drop(clients[4].take());
        let want: Vec<u64> = slots[2..5].iter().map(|s| s.id).collect();
        // Loopback delivers the FINs and the reset before `close` returns; a few looks
        // all the same, for a slow machine.
        let mut seen = gone();
        for _ in 0..100 {
            if seen == want {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            seen = gone();
        }
        assert_eq!(seen, want);
        drop(servers);
    }

    /// A waiting answer's client is looked at once the answer has waited a look's
    /// interval, and closed when it has gone; an answer that waits less, a connection
    /// that waits for nothing, and a client still there are left alone.
    #[test]
    fn a_waiting_answers_gone_client_is_closed_after_a_look_interval() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let table = Table::new(16, 16);
        // 0 waits and its client leaves; 1 waits for nothing (answered at once) and its
        // client leaves; 2 waits and its client stays.
        let (mut clients, mut servers, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            let slot = table.admit(ip(1), server.as_raw_fd()).unwrap();
            // Being answered: the watchdog never takes it for idle.
            slot.stamp.store(1, Ordering::Relaxed);
            slots.push(slot);
            clients.push(Some(client));
            servers.push(server);
        }
        let since = table.ticks.load(Ordering::Relaxed);
        slots[0].waiting_since.store(since, Ordering::Relaxed);
        slots[2].waiting_since.store(since, Ordering::Relaxed);
        drop(clients[0].take());
        drop(clients[1].take());
        std::thread::sleep(Duration::from_millis(20));
        // Looks every 4 ticks: the look at tick 4 comes 3 ticks after the wait began.
        for _ in 0..3 {
            table.tick(1000, 4);
        }
        assert!(slots.iter().all(|s| raised(s) == 0), "looked at too soon");
        // The look at tick 8 (a few more looks, for a slow machine).
        for _ in 0..100 {
            for _ in 0..4 {
                table.tick(1000, 4);
            }
            if raised(&slots[0]) != 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(raised(&slots[0]), Flags::GONE);
        assert_eq!(raised(&slots[1]), 0);
        assert_eq!(raised(&slots[2]), 0);
        drop(servers);
    }

    #[test]
    fn the_clock_closes_a_connection_idle_for_a_whole_period_and_no_other() {
        let table = Table::new(8, 8);
        let idle = table.admit(ip(1), -1).unwrap();
        let busy = table.admit(ip(2), -1).unwrap();
        let answering = table.admit(ip(3), -1).unwrap();
        // A request being answered: its stamp odd from the first tick on.
        answering.stamp.store(1, Ordering::Relaxed);
        // The first tick after it came counts as its start: four more make the period.
        for tick in 1..=4 {
            // `busy` starts a request or ends an answer every tick.
            busy.stamp.fetch_add(1, Ordering::Relaxed);
            table.tick(4, 1);
            assert_eq!(
                raised(&idle),
                0,
                "tick {tick}: closed before a whole period"
            );
        }
        busy.stamp.fetch_add(1, Ordering::Relaxed);
        table.tick(4, 1);
        assert_eq!(raised(&idle), Flags::IDLE);
        assert_eq!(raised(&busy), 0);
        // A whole period on one answer (a slow handler, a stream) is not idleness.
        for _ in 0..8 {
            table.tick(4, 1);
        }
        assert_eq!(raised(&answering), 0);
        // Once its answer is done, a whole period counts from the tick that sees it.
        answering.stamp.store(2, Ordering::Relaxed);
        for _ in 0..4 {
            table.tick(4, 1);
            assert_eq!(raised(&answering), 0);
        }
        table.tick(4, 1);
        assert_eq!(raised(&answering), Flags::IDLE);
    }

    #[test]
    fn a_drain_reaches_every_connection_and_those_accepted_after_it() {
        let table = Table::new(8, 8);
        let before = table.admit(ip(1), -1).unwrap();
        table.drain();
        assert_eq!(raised(&before), Flags::DRAIN);
        let after = table.admit(ip(2), -1).unwrap();
        assert_eq!(raised(&after), Flags::DRAIN);
    }

    #[test]
    fn the_task_of_a_connection_stays_small() {
        // Every open connection keeps its task (this future) allocated: what is rarely
        // needed (a refusal's read buffer) is boxed where it is needed.
        fn size<F, Fut>(_: F) -> usize
        where
            F: FnOnce(
                TcpStream,
                SocketAddr,
                &'static Arc<Empty>,
                &'static http1::Builder,
                &'static Place,
                Limits,
            ) -> Fut,
        {
            std::mem::size_of::<Fut>()
        }
        let bytes = size(serve::<Empty>);
        // 1,024 bytes on 2026-11-26 (5.7 KB before the refusal was boxed).
        assert!(bytes <= 1536, "the connection's future is {bytes} bytes");
    }

    #[test]
    fn the_future_hyper_keeps_for_a_request_stays_small() {
        // hyper keeps it in a box per connection, and writes it there for every request:
        // an answer made at once, or a boxed future.
        type Later = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;
        let bytes = std::mem::size_of::<Served<Later>>();
        assert!(bytes <= 384, "the request's future is {bytes} bytes");
    }

    #[test]
    fn hypers_bare_answers_are_recognised_at_the_end_of_a_write_only() {
        let date = "Mon, 23 Nov 2026 07:03:18 GMT";
        let bare = |line: &str| {
            format!("{line}\r\nconnection: close\r\ncontent-length: 0\r\ndate: {date}\r\n\r\n")
        };
        for (line, want) in [
            ("HTTP/1.1 400 Bad Request", Bare::BadRequest),
            ("HTTP/1.1 414 URI Too Long", Bare::UriTooLong),
            (
                "HTTP/1.1 431 Request Header Fields Too Large",
                Bare::HeadTooLarge,
            ),
        ] {
            assert_eq!(bare_answer(bare(line).as_bytes()), Some((0, want)));
            // After an answer still waiting in the same write.
            let before =
                format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\ndate: {date}\r\n\r\n{{}}");
            let both = format!("{before}{}", bare(line));
            assert_eq!(bare_answer(both.as_bytes()), Some((before.len(), want)));
        }
        // Answers to parsed requests: a body last, or (HEAD, 204) a head of another
        // shape; a bare head's remainder after a partial write is not one either.
        for other in [
            format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 10\r\ndate: {date}\r\n\r\n"
            ),
            format!("HTTP/1.1 200 OK\r\ncontent-length: 0\r\ndate: {date}\r\n\r\n"),
            format!(
                "HTTP/1.1 204 No Content\r\nconnection: close\r\ncontent-length: 0\r\ndate: {date}\r\n\r\n"
            ),
            format!(
                "1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: {date}\r\n\r\n"
            ),
            bare("HTTP/1.1 400 Bad Request")[..40].to_owned(),
            "{\"status\":\"ok\"}".to_owned(),
            " GMT\r\n\r\n".to_owned(),
            String::new(),
        ] {
            assert_eq!(bare_answer(other.as_bytes()), None, "{other:?}");
        }
    }

    #[test]
    fn one_address_is_capped_and_others_are_not() {
        let table = Table::new(10, 2);
        let a1 = table.admit(ip(3), -1).unwrap();
        let _a2 = table.admit(ip(3), -1).unwrap();
        assert_eq!(table.admit(ip(3), -1).unwrap_err(), Refusal::PerAddress);
        let _b = table.admit(ip(2), -1).unwrap();
        // A closed connection frees its address's place.
        table.lock().remove(&a1);
        assert!(table.admit(ip(3), -1).is_ok());
    }

    #[test]
    fn a_full_table_evicts_the_longest_idle_and_never_a_busy_one() {
        let table = Table::new(3, 10);
        let old = table.admit(ip(3), -1).unwrap();
        table.ticks.store(5, Ordering::Relaxed);
        let busy_old = table.admit(ip(4), -1).unwrap();
        busy_old.active_tick.store(0, Ordering::Relaxed);
        busy_old.stamp.store(1, Ordering::Relaxed); // answering a request
        let recent = table.admit(ip(5), -1).unwrap();
        table.ticks.store(9, Ordering::Relaxed);
        // Full: the oldest idle one (`old`, tick 1) goes, not the busier `busy_old`.
        let new = table.admit(ip(6), -1).unwrap();
        assert_ne!(old.flags.bits.load(Ordering::Relaxed) & Flags::EVICT, 0);
        assert_eq!(busy_old.flags.bits.load(Ordering::Relaxed), 0);
        assert_eq!(recent.flags.bits.load(Ordering::Relaxed), 0);
        // The evicted connection's own close does not free a second place.
        table.lock().remove(&old);
        assert_eq!(table.lock().slots.len(), 3);
        // Everyone busy: nothing to evict.
        for s in [&recent, &new] {
            s.stamp.store(3, Ordering::Relaxed);
        }
        assert_eq!(table.admit(ip(7), -1).unwrap_err(), Refusal::Full);
    }
}
