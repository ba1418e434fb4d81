//! One HTTPS GET, the way RDAP is fetched: a connection through the outbound guard
//! (`crate::net::Guard`), TLS with rustls against the configured roots, HTTP/1.1 with
//! hyper, and a deadline on every step (connect, TLS handshake, first byte, whole)
//! and a cap on the body.
//!
//! Connections are kept alive and reused: after an answer read whole, the connection
//! waits idle (at most [`IDLE_TIMEOUT`], at most [`MAX_IDLE_PER_SERVER`] per server) for
//! the next request to the same `host:port`, which spares the registry a TCP and TLS
//! handshake per lookup. A connection the server closed meanwhile is found out before
//! or while sending, and the GET (idempotent) goes once more over a new one. A
//! connection whose answer was cut short (too large, a timeout, an error) is closed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::Uri;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::time::Instant;

use super::limits::{Outcome, Permit, Refusal};
use crate::net::{Checked, Guard};

/// What identifies tldsnap to upstreams (RFC 9110 section 10.1.5: a product token and
/// where to learn about it), so a registry that sees too much can find who asks.
pub const USER_AGENT: &str = concat!(
    "tldsnap/",
    env!("CARGO_PKG_VERSION"),
    " (+https://tldsnap.dev/docs/live)"
);

/// How long each step of a request may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Resolving the host and opening the TCP connection.
    pub connect: Duration,
    /// The TLS handshake.
    pub tls: Duration,
    /// From the request sent to the response head (the upstream's thinking time).
    pub first_byte: Duration,
    /// The whole request, body included.
    pub whole: Duration,
}

impl Default for Timeouts {
    /// 3 s to connect, 3 s for TLS, 5 s to the first byte, 8 s in all: a registry that
    /// answers later than that is better reported as slow than waited for.
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(3),
            tls: Duration::from_secs(3),
            first_byte: Duration::from_secs(5),
            whole: Duration::from_secs(8),
        }
    }
}

/// The step a request was on when its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Resolving and connecting.
    Connect,
    /// The TLS handshake.
    Tls,
    /// Waiting for the response head.
    FirstByte,
    /// Reading the body (or the whole request's time).
    Body,
}

impl Step {
    /// The step in words.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Connect => "connect",
            Step::Tls => "TLS handshake",
            Step::FirstByte => "first byte",
            Step::Body => "body",
        }
    }
}

/// Why a GET has no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// A step ran out of time.
    Timeout(Step),
    /// The outbound guard refused the host (a forbidden address; will not change).
    Refused(String),
    /// Connecting, TLS (an invalid certificate included) or HTTP failed.
    Failed(String),
    /// The body is longer than the cap.
    TooLarge(usize),
    /// tldsnap held the request back: the address it would connect to is resting or
    /// its pace leaves no room in the budget.
    Held(Refusal),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Timeout(step) => write!(f, "no answer in time ({})", step.as_str()),
            FetchError::Refused(why) => write!(f, "refused: {why}"),
            FetchError::Failed(why) => f.write_str(why),
            FetchError::TooLarge(max) => write!(f, "the answer is larger than {max} bytes"),
            FetchError::Held(_) => f.write_str("held back by tldsnap's pace for the address"),
        }
    }
}

/// A response: status, the headers tldsnap reads, and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// HTTP status.
    pub status: u16,
    /// `Retry-After`, as sent.
    pub retry_after: Option<String>,
    /// `Location`, as sent (redirects).
    pub location: Option<String>,
    /// The body (at most the cap).
    pub body: Bytes,
}

/// How long a connection is kept idle for the next request to its server. Shorter than
/// the keep-alive timeouts servers commonly use (Apache 5 s is shorter: such a server
/// closes first, which is found out when the connection is taken).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Most idle connections kept per server (the default concurrency per upstream).
pub const MAX_IDLE_PER_SERVER: usize = 4;

/// An open HTTP/1.1 connection: the request half, and the task driving the socket
/// (stopped when this is dropped).
struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    /// The address it is connected to.
    addr: SocketAddr,
    _driver: AbortOnDrop,
    idle_since: Instant,
}

/// Idle connections by `host:port`.
type Idle = Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<Conn>>>>;

/// An HTTPS client with one configuration. Clones share the idle connections.
#[derive(Clone)]
pub struct Client {
    tls: tokio_rustls::TlsConnector,
    guard: Guard,
    timeouts: Timeouts,
    max_body: usize,
    idle: Idle,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("guard", &self.guard)
            .field("timeouts", &self.timeouts)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client verifying servers with `tls`, connecting through `guard` (its timeout is
    /// replaced by `timeouts.connect`), reading bodies of at most `max_body` bytes.
    pub fn new(
        tls: Arc<rustls::ClientConfig>,
        guard: Guard,
        timeouts: Timeouts,
        max_body: usize,
    ) -> Client {
        Client {
            tls: tokio_rustls::TlsConnector::from(tls),
            guard: Guard {
                timeout: timeouts.connect,
                ..guard
            },
            timeouts,
            max_body,
            idle: Idle::default(),
        }
    }

    /// An idle connection to `key` that is still open and ready, if any (the newest
    /// first; expired and closed ones are dropped on the way).
    async fn take_idle(&self, key: &str) -> Option<Conn> {
        loop {
            let mut conn = {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                idle.get_mut(key)?.pop()?
            };
            if conn.idle_since.elapsed() >= IDLE_TIMEOUT || conn.sender.is_closed() {
                continue;
            }
            // A healthy idle connection is ready at once; one the server is closing
            // fails here.
            let ready = tokio::time::timeout(Duration::from_millis(50), conn.sender.ready());
            if let Ok(Ok(())) = ready.await {
                return Some(conn);
            }
        }
    }

    /// Keeps `conn` for the next request to `key`; drops what has expired or closed,
    /// and the oldest beyond [`MAX_IDLE_PER_SERVER`].
    fn put_idle(&self, key: String, mut conn: Conn) {
        conn.idle_since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.retain(|_, conns| {
            conns.retain(|c| c.idle_since.elapsed() < IDLE_TIMEOUT && !c.sender.is_closed());
            !conns.is_empty()
        });
        let conns = idle.entry(key).or_default();
        conns.push(conn);
        if conns.len() > MAX_IDLE_PER_SERVER {
            conns.remove(0);
        }
    }

    /// A new connection to `host:port`: through the guard, paced by `pace` for the
    /// address connected to, TLS, the HTTP/1.1 handshake.
    async fn connect(
        &self,
        host: &str,
        port: u16,
        server_name: ServerName<'static>,
        deadline: Instant,
        pace: &impl Pace,
    ) -> Result<(Conn, Permit), FetchError> {
        let step_deadline = |step: Duration| deadline.min(Instant::now() + step);
        let checked = tokio::time::timeout_at(
            step_deadline(self.timeouts.connect),
            self.guard.resolve(host, port),
        )
        .await
        .map_err(|_| FetchError::Timeout(Step::Connect))?
        .map_err(guard_error)?;
        let (tcp, permit) =
            connect_each(&self.guard, &checked, deadline, self.timeouts.connect, pace).await?;
        let addr = tcp.peer_addr().unwrap_or_else(|_| checked.addrs()[0]);
        let tls = tokio::time::timeout_at(
            step_deadline(self.timeouts.tls),
            self.tls.connect(server_name, tcp),
        )
        .await
        .map_err(|_| FetchError::Timeout(Step::Tls))?
        .map_err(|e| FetchError::Failed(format!("TLS: {e}")))?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tls))
                .await
                .map_err(|e| FetchError::Failed(format!("HTTP: {e}")))?;
        // The connection is driven beside the requests; it ends when the server closes
        // it, or when the connection is dropped (a deadline, an answer cut short, idle
        // too long).
        Ok((
            Conn {
                sender,
                addr,
                _driver: AbortOnDrop(tokio::spawn(connection)),
                idle_since: Instant::now(),
            },
            permit,
        ))
    }

    /// GETs `url` (`https://` only) with `accept`, before `deadline` and within the
    /// whole-request timeout, whichever comes first; `pace` gives leave to send it to
    /// the address it goes to (a kept connection's, or each address of the host's in
    /// turn), held until the answer is read.
    pub async fn get(
        &self,
        url: &Uri,
        accept: &'static str,
        deadline: Instant,
        pace: impl Pace,
    ) -> Result<Fetched, FetchError> {
        let deadline = deadline.min(Instant::now() + self.timeouts.whole);
        let step_deadline = |step: Duration| deadline.min(Instant::now() + step);
        if url.scheme_str() != Some("https") {
            return Err(FetchError::Refused(format!("{url} is not an https:// URL")));
        }
        let host = url
            .host()
            .ok_or_else(|| FetchError::Refused(format!("{url} has no host")))?;
        let port = url.port_u16().unwrap_or(443);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let server_name = ServerName::try_from(bare.to_owned())
            .map_err(|_| FetchError::Refused(format!("{host} is not a TLS server name")))?;
        let key = format!("{host}:{port}");
        let path = url.path_and_query().map_or("/", |p| p.as_str());
        let authority = url.authority().map_or(host, |a| a.as_str());
        let request = || {
            hyper::Request::get(path)
                .header(header::HOST, authority)
                .header(header::ACCEPT, accept)
                .header(header::USER_AGENT, USER_AGENT)
                .body(Empty::<Bytes>::new())
                .map_err(|e| FetchError::Failed(format!("HTTP: {e}")))
        };
        // A kept connection first; when the server closed it before answering, once
        // more over a new one.
        let mut reused = self.take_idle(&key).await;
        let (conn, response, _paced) = loop {
            let fresh = reused.is_none();
            let (mut conn, paced) = match reused.take() {
                Some(conn) => {
                    let paced = pace(conn.addr).await.map_err(FetchError::Held)?;
                    (conn, paced)
                }
                None => {
                    self.connect(host, port, server_name.clone(), deadline, &pace)
                        .await?
                }
            };
            let sent = tokio::time::timeout_at(
                step_deadline(self.timeouts.first_byte),
                conn.sender.send_request(request()?),
            )
            .await
            .map_err(|_| FetchError::Timeout(Step::FirstByte))?;
            match sent {
                Ok(response) => break (conn, response, paced),
                Err(e)
                    if !fresh
                        && (e.is_canceled() || e.is_closed() || e.is_incomplete_message()) => {}
                Err(e) => return Err(FetchError::Failed(format!("HTTP: {e}"))),
            }
        };
        let (parts, body) = response.into_parts();
        let text = |h: Option<&HeaderValue>| {
            h.and_then(|v| v.to_str().ok())
                .map(|s| s.chars().take(512).collect::<String>())
        };
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > self.max_body as u64) {
            return Err(FetchError::TooLarge(self.max_body));
        }
        let body = tokio::time::timeout_at(deadline, Limited::new(body, self.max_body).collect())
            .await
            .map_err(|_| FetchError::Timeout(Step::Body))?
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    FetchError::TooLarge(self.max_body)
                } else {
                    FetchError::Failed(format!("HTTP body: {e}"))
                }
            })?
            .to_bytes();
        // Read whole: the connection can serve the next request, unless either side
        // said it closes.
        let closes = |h: &hyper::HeaderMap| {
            h.get_all(header::CONNECTION).iter().any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.to_ascii_lowercase().contains("close"))
            })
        };
        if !closes(&parts.headers) && !conn.sender.is_closed() {
            self.put_idle(key, conn);
        }
        Ok(Fetched {
            status: parts.status.as_u16(),
            retry_after: text(parts.headers.get(header::RETRY_AFTER)),
            location: text(parts.headers.get(header::LOCATION)),
            body,
        })
    }
}

/// Leave to send to an address: what [`crate::live::Live`] gives for the address a
/// connection goes to (its pace, its breaker, the key's share of it).
pub trait Pace: Fn(SocketAddr) -> Self::Admit {
    /// The admission's future.
    type Admit: std::future::Future<Output = Result<Permit, Refusal>> + Send;
}

impl<F, A> Pace for F
where
    F: Fn(SocketAddr) -> A,
    A: std::future::Future<Output = Result<Permit, Refusal>> + Send,
{
    type Admit = A;
}

/// What a refusal of the guard is as a fetch's error.
pub(crate) fn guard_error(e: crate::net::GuardError) -> FetchError {
    match e {
        crate::net::GuardError::Timeout { .. } => FetchError::Timeout(Step::Connect),
        e if e.is_refusal() => FetchError::Refused(e.why()),
        e => FetchError::Failed(e.to_string()),
    }
}

/// A TCP connection to one of `checked`'s addresses, in order, each paced as that
/// address (`pace`: leave to connect to it) and given `timeout` once admitted, all
/// before `deadline`: the next address when one is held back or does not accept. A
/// connect that fails or times out counts against its address; one that succeeds
/// clears it.
pub(crate) async fn connect_each(
    guard: &Guard,
    checked: &Checked,
    deadline: Instant,
    timeout: Duration,
    pace: &impl Pace,
) -> Result<(tokio::net::TcpStream, Permit), FetchError> {
    let mut last = None;
    for &addr in checked.addrs() {
        let permit = match pace(addr).await {
            Ok(permit) => permit,
            Err(refusal) => {
                last = Some(FetchError::Held(refusal));
                continue;
            }
        };
        let one = guard
            .check_addrs(checked.host(), [addr])
            .map_err(guard_error)?;
        let connect_by = deadline.min(Instant::now() + timeout);
        match tokio::time::timeout_at(connect_by, guard.connect(&one)).await {
            Ok(Ok(tcp)) => {
                permit.upstream().record(Outcome::Success);
                return Ok((tcp, permit));
            }
            Ok(Err(e)) => {
                permit.upstream().record(Outcome::Failure);
                last = Some(guard_error(e));
            }
            Err(_) => {
                permit.upstream().record(Outcome::Failure);
                last = Some(FetchError::Timeout(Step::Connect));
            }
        }
    }
    Err(last.unwrap_or(FetchError::Timeout(Step::Connect)))
}

/// Aborts the connection task when the request is done or dropped.
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The TLS client configuration for upstreams: rustls with the ring provider, TLS 1.2
/// and 1.3, verifying against `roots` (PEM certificates) or, without them, Mozilla's
/// roots (webpki-roots).
pub fn client_config(
    roots: Option<&[rustls::pki_types::CertificateDer<'static>]>,
) -> Result<Arc<rustls::ClientConfig>, String> {
    let store = root_store(roots)?;
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS configuration: {e}"))?
    .with_root_certificates(store)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The root store of `roots`, or Mozilla's roots when `None`.
pub fn root_store(
    roots: Option<&[rustls::pki_types::CertificateDer<'static>]>,
) -> Result<rustls::RootCertStore, String> {
    let mut store = rustls::RootCertStore::empty();
    match roots {
        None => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(certs) => {
            for cert in certs {
                store
                    .add(cert.clone())
                    .map_err(|e| format!("a root certificate is not usable: {e}"))?;
            }
        }
    }
    Ok(store)
}

/// Reads the PEM certificates of a `--tls-roots` file.
pub fn read_roots(
    path: &std::path::Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let certs = rustls::pki_types::CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: not PEM certificates: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{}: no certificate (expected PEM blocks)",
            path.display()
        ));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mozilla_roots_are_the_default() {
        let store = root_store(None).unwrap();
        assert!(store.len() > 100, "{}", store.len());
        assert!(client_config(None).is_ok());
    }

    #[tokio::test]
    async fn only_https_urls_are_fetched() {
        let client = Client::new(
            client_config(None).unwrap(),
            Guard::new(false),
            Timeouts::default(),
            1024,
        );
        let far = Instant::now() + Duration::from_secs(5);
        let addresses = Arc::new(crate::live::limits::Upstreams::new(Default::default()));
        let pace = |addr: SocketAddr| {
            let addresses = Arc::clone(&addresses);
            async move { addresses.get(&addr.to_string())?.admit(None, far).await }
        };
        for url in ["http://rdap.test/", "ftp://rdap.test/"] {
            let err = client
                .get(&url.parse().unwrap(), "application/rdap+json", far, pace)
                .await
                .unwrap_err();
            assert!(matches!(err, FetchError::Refused(_)), "{url}: {err}");
        }
        // A loopback target is the guard's to refuse, before any connection.
        let err = client
            .get(
                &"https://127.0.0.1:9/".parse().unwrap(),
                "application/rdap+json",
                far,
                pace,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, FetchError::Refused(why) if why.contains("loopback")),
            "{err}"
        );
        assert!(addresses.is_empty(), "a refused address is not paced");
    }
}
