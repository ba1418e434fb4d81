//! One HTTP POST to a subscriber's URL: hyper 1's HTTP/1.1 client over a connection
//! that `crate::net::Guard` opened to a checked address, through rustls for `https`.
//!
//! | rule | value |
//! |---|---|
//! | schemes | `https`; `http` only when the sender allows private targets (`serve --allow-private-webhooks`) |
//! | addresses | the guard's: every resolved address checked, the connection made to a checked one |
//! | certificates | Mozilla's roots (`webpki-roots`), the name in the URL; TLS 1.2 and 1.3 |
//! | time | one deadline of [`DEFAULT_TIMEOUT`] (10 s) for resolving, connecting, TLS, the request and the response |
//! | response body | read up to [`MAX_RESPONSE_BODY`] (64 KiB) and no further; the connection is then dropped |
//! | redirects | never followed: a 3xx is an answer like any other non-2xx |
//! | connections | one per attempt (`Connection: close`): deliveries to one endpoint are one at a time and minutes apart when they fail |

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName};
use url::Url;

use crate::net::{Guard, GuardError};

/// Longest time of one delivery attempt, everything included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a response body read (kept for the attempt log, cut to less).
pub const MAX_RESPONSE_BODY: usize = 64 * 1024;
/// The `User-Agent` of deliveries.
pub const USER_AGENT: &str = concat!("tldsnap-webhooks/", env!("CARGO_PKG_VERSION"));

/// What became of one POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered (any status).
    Answered {
        /// The status code.
        status: u16,
        /// The start of the body (at most [`MAX_RESPONSE_BODY`] bytes were read).
        body: Vec<u8>,
    },
    /// No answer: the guard refused the target, or the connection, TLS or the request
    /// failed or timed out.
    Failed {
        /// What went wrong, for the attempt log.
        error: String,
        /// The guard refused the target (a private address, a bad host): retrying will
        /// not help until the URL or its DNS changes.
        refused: bool,
    },
}

/// Sends deliveries. Cheap to clone.
#[derive(Clone)]
pub struct Sender {
    guard: Guard,
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("guard", &self.guard)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Sender {
    /// A sender that trusts Mozilla's roots; `allow_private` allows `http://` and
    /// private addresses (the guard's rule).
    pub fn new(allow_private: bool) -> Sender {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        Sender::with_roots(allow_private, roots)
    }

    /// A sender that trusts `roots` only (tests with their own CA).
    pub fn with_roots(allow_private: bool, roots: rustls::RootCertStore) -> Sender {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Sender {
            guard: Guard {
                allow_private,
                timeout: DEFAULT_TIMEOUT,
            },
            tls: Arc::new(tls),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same sender with another deadline per attempt (and for the guard).
    pub fn with_timeout(mut self, timeout: Duration) -> Sender {
        self.timeout = timeout;
        self.guard.timeout = timeout;
        self
    }

    /// The deadline of one attempt.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether private targets and `http://` are allowed.
    pub fn allows_private(&self) -> bool {
        self.guard.allow_private
    }

    /// Checks a URL a subscriber gives, without connecting: `https` (or `http` when
    /// allowed), a host the guard takes (an IP literal is checked too), no user
    /// information, no fragment. Returns the reason it is refused.
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        match url.scheme() {
            "https" => {}
            "http" if self.guard.allow_private => {}
            "http" => {
                return Err(
                    "must be https:// (http:// only on a server started with --allow-private-webhooks)"
                        .to_owned(),
                );
            }
            other => return Err(format!("scheme {other:?} is not https")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not carry a user name or password".to_owned());
        }
        if url.fragment().is_some() {
            return Err("must not have a fragment (#...)".to_owned());
        }
        let host = url.host_str().ok_or("has no host")?;
        self.guard.check_host(host).map_err(|e| e.to_string())
    }

    /// POSTs `body` to `url` with `headers` (and `Host`, `Content-Type`,
    /// `Content-Length`, `User-Agent`), within the deadline.
    pub async fn post(
        &self,
        url: &Url,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Outcome {
        if let Err(error) = self.check_url(url) {
            return Outcome::Failed {
                // "URL must be https://...", "URL refused: the host is ...".
                error: format!("URL {error}"),
                refused: true,
            };
        }
        match tokio::time::timeout(self.timeout, self.exchange(url, headers, body)).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(failure)) => failure,
            Err(_) => Outcome::Failed {
                error: format!("no answer within {} s", self.timeout.as_secs_f64()),
                refused: false,
            },
        }
    }

    async fn exchange(
        &self,
        url: &Url,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Result<Outcome, Outcome> {
        let failed = |error: String| Outcome::Failed {
            error,
            refused: false,
        };
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(443);
        let stream = self
            .guard
            .connect_host(host, port)
            .await
            .map_err(|e| match e {
                e @ (GuardError::InvalidHost { .. } | GuardError::Forbidden { .. }) => {
                    Outcome::Failed {
                        error: e.to_string(),
                        refused: true,
                    }
                }
                e => failed(e.to_string()),
            })?;
        let mut request =
            Request::post(url[url::Position::BeforePath..url::Position::AfterQuery].to_owned());
        let h = request.headers_mut().expect("a fresh builder");
        let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
        h.insert(header::HOST, value(authority)?);
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        for (name, v) in headers {
            h.insert(*name, value(v)?);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| failed(format!("cannot build the request: {e}")))?;
        if url.scheme() == "https" {
            let name = match url.host() {
                Some(url::Host::Domain(d)) => ServerName::try_from(d.to_owned()),
                Some(url::Host::Ipv4(ip)) => Ok(ServerName::from(std::net::IpAddr::V4(ip))),
                Some(url::Host::Ipv6(ip)) => Ok(ServerName::from(std::net::IpAddr::V6(ip))),
                None => return Err(failed("no host".to_owned())),
            }
            .map_err(|e| failed(format!("not a TLS server name: {e}")))?;
            let tls = tokio_rustls::TlsConnector::from(Arc::clone(&self.tls))
                .connect(name, stream)
                .await
                .map_err(|e| failed(format!("TLS: {e}")))?;
            exchange_over(tls, request).await
        } else {
            exchange_over(stream, request).await
        }
    }
}

fn value(v: &str) -> Result<HeaderValue, Outcome> {
    HeaderValue::from_str(v).map_err(|_| Outcome::Failed {
        error: format!("{v:?} is not a header value"),
        refused: true,
    })
}

/// The HTTP/1.1 exchange on an open connection: the request, the status, at most
/// [`MAX_RESPONSE_BODY`] bytes of the body.
async fn exchange_over<S>(io: S, request: Request<Full<Bytes>>) -> Result<Outcome, Outcome>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let failed = |error: String| Outcome::Failed {
        error,
        refused: false,
    };
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| failed(format!("HTTP: {e}")))?;
    // The connection is driven beside the request and dropped with it: reading stops
    // at the body limit, and a receiver that keeps talking is cut off.
    let driver = AbortOnDrop(tokio::spawn(async move {
        let _ = conn.await;
    }));
    let response = tx
        .send_request(request)
        .await
        .map_err(|e| failed(format!("HTTP: {e}")))?;
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut read = Vec::new();
    while read.len() < MAX_RESPONSE_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    let room = MAX_RESPONSE_BODY - read.len();
                    read.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            // A body cut short still leaves the status, which is the answer.
            Some(Err(_)) | None => break,
        }
    }
    drop(driver);
    Ok(Outcome::Answered { status, body: read })
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A root store holding `der` only (a test CA).
pub fn roots_of(der: &[u8]) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(der.to_vec()))
        .expect("a valid CA certificate");
    roots
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use tokio::net::TcpListener;

    /// A receiver on 127.0.0.1:0 answering every request with `answer(request)`.
    async fn receiver<F>(
        answer: F,
    ) -> (
        std::net::SocketAddr,
        tokio::sync::mpsc::UnboundedReceiver<(hyper::http::request::Parts, Bytes)>,
    )
    where
        F: Fn() -> hyper::Response<Full<Bytes>> + Send + Sync + Clone + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (tx, answer) = (tx.clone(), answer.clone());
                tokio::spawn(serve(TokioIo::new(stream), tx, answer));
            }
        });
        (addr, rx)
    }

    async fn serve<I, F>(
        io: I,
        tx: tokio::sync::mpsc::UnboundedSender<(hyper::http::request::Parts, Bytes)>,
        answer: F,
    ) where
        I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
        F: Fn() -> hyper::Response<Full<Bytes>> + Send + Sync + Clone + 'static,
    {
        let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let (tx, answer) = (tx.clone(), answer.clone());
            async move {
                let (parts, body) = req.into_parts();
                let body = body.collect().await.unwrap().to_bytes();
                let _ = tx.send((parts, body));
                Ok::<_, Infallible>(answer())
            }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(io, service)
            .await;
    }

    fn status(code: u16, body: Vec<u8>) -> hyper::Response<Full<Bytes>> {
        let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
        r
    }

    #[tokio::test]
    async fn posts_the_body_and_headers_and_reads_the_status() {
        let (addr, mut got) = receiver(|| status(204, Vec::new())).await;
        let url = Url::parse(&format!("http://{addr}/hook?x=1")).unwrap();
        let headers = [("webhook-id", "msg_1".to_owned())];
        let outcome = Sender::new(true)
            .post(&url, &headers, Bytes::from_static(b"{\"a\":1}"))
            .await;
        assert_eq!(
            outcome,
            Outcome::Answered {
                status: 204,
                body: Vec::new()
            }
        );
        let (parts, body) = got.recv().await.unwrap();
        assert_eq!(parts.method, hyper::Method::POST);
        assert_eq!(parts.uri.path_and_query().unwrap().as_str(), "/hook?x=1");
        assert_eq!(parts.headers["host"], addr.to_string());
        assert_eq!(parts.headers["webhook-id"], "msg_1");
        assert_eq!(parts.headers["content-type"], "application/json");
        assert_eq!(parts.headers["user-agent"], USER_AGENT);
        assert_eq!(&body[..], b"{\"a\":1}");
    }

    #[tokio::test]
    async fn redirects_are_answers_and_bodies_stop_at_64_kib() {
        let (addr, mut got) = receiver(|| {
            let mut r = status(301, Vec::new());
            r.headers_mut().insert(
                "location",
                HeaderValue::from_static("http://127.0.0.1:1/elsewhere"),
            );
            r
        })
        .await;
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        let outcome = Sender::new(true).post(&url, &[], Bytes::new()).await;
        assert!(
            matches!(outcome, Outcome::Answered { status: 301, .. }),
            "{outcome:?}"
        );
        got.recv().await.unwrap();
        assert!(got.try_recv().is_err(), "the redirect was not followed");

        let (addr, _got) = receiver(|| status(500, vec![b'x'; 1 << 20])).await;
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        match Sender::new(true).post(&url, &[], Bytes::new()).await {
            Outcome::Answered { status: 500, body } => assert_eq!(body.len(), MAX_RESPONSE_BODY),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn refuses_private_targets_and_plain_http_by_default() {
        let strict = Sender::new(false);
        for (url, want) in [
            ("http://example.com/", "https"),
            ("https://127.0.0.1/", "loopback"),
            ("https://[::1]:8443/", "loopback"),
            ("https://169.254.169.254/latest/meta-data", "metadata"),
            ("https://10.0.0.1/", "private"),
            ("https://user:pw@example.com/", "user name"),
            ("https://example.com/#x", "fragment"),
            ("ftp://example.com/", "scheme"),
            ("https://0x7f.1/", "loopback"),
        ] {
            let url = Url::parse(url).unwrap();
            let err = strict.check_url(&url).unwrap_err();
            assert!(err.contains(want), "{url}: {err}");
            match strict.post(&url, &[], Bytes::new()).await {
                Outcome::Failed { refused: true, .. } => {}
                other => panic!("{url}: {other:?}"),
            }
        }
        assert!(
            strict
                .check_url(&Url::parse("https://hooks.example.com/x").unwrap())
                .is_ok()
        );
        let open = Sender::new(true);
        assert!(
            open.check_url(&Url::parse("http://127.0.0.1:9/").unwrap())
                .is_ok()
        );
        assert!(
            open.check_url(&Url::parse("http://169.254.169.254/").unwrap())
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_receiver_that_never_answers_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Accepts and holds connections, reads nothing, answers nothing.
        let hold = tokio::spawn(async move {
            let mut held = Vec::new();
            loop {
                held.push(listener.accept().await.unwrap());
            }
        });
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        let sender = Sender::new(true).with_timeout(Duration::from_millis(200));
        match sender.post(&url, &[], Bytes::new()).await {
            Outcome::Failed {
                error,
                refused: false,
            } => assert!(error.contains("no answer"), "{error}"),
            other => panic!("{other:?}"),
        }
        hold.abort();
    }

    #[tokio::test]
    async fn https_checks_the_certificate_against_the_roots() {
        let ca = include_bytes!("testdata/ca.der");
        let cert = CertificateDer::from(include_bytes!("testdata/leaf.der").to_vec());
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(
            include_bytes!("testdata/leaf.key.der").to_vec().into(),
        );
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, mut got) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(stream).await {
                        serve(TokioIo::new(tls), tx, || status(200, b"ok".to_vec())).await;
                    }
                });
            }
        });
        for host in ["localhost", "127.0.0.1"] {
            let url = Url::parse(&format!("https://{host}:{}/tls", addr.port())).unwrap();
            let outcome = Sender::with_roots(true, roots_of(ca))
                .post(&url, &[], Bytes::from_static(b"{}"))
                .await;
            assert_eq!(
                outcome,
                Outcome::Answered {
                    status: 200,
                    body: b"ok".to_vec()
                },
                "{host}"
            );
            let (parts, body) = got.recv().await.unwrap();
            assert_eq!((parts.uri.path(), &body[..]), ("/tls", &b"{}"[..]));
        }
        // Mozilla's roots do not include the test CA: the handshake fails, nothing is sent.
        let url = Url::parse(&format!("https://localhost:{}/tls", addr.port())).unwrap();
        match Sender::new(true).post(&url, &[], Bytes::new()).await {
            Outcome::Failed {
                error,
                refused: false,
            } => assert!(error.contains("TLS"), "{error}"),
            other => panic!("{other:?}"),
        }
        assert!(got.try_recv().is_err());
    }
}
