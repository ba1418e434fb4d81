//! The collectors' HTTP: one request at a time through the outbound guard, with the
//! rules of [`HttpSettings`] and the source's rate limit.
//!
//! | rule | value |
//! |---|---|
//! | connection | `crate::net::Guard`: every address checked, private targets only with `--allow-private-targets`; TLS with rustls and Mozilla's roots for `https`; `http` only with `--allow-private-targets` (tests, a proxy on the operator's own network) |
//! | time | one deadline per attempt (`timeout_secs`), connection to last byte |
//! | body | at most `max_body_bytes`, a longer one fails the attempt |
//! | retries | `retries` more attempts on a timeout, a broken connection or body, 429 and 5xx; waits `backoff_ms` doubled each time with full jitter, or the `Retry-After` the source sent (seconds or an HTTP date) when it sent one, up to `max_retry_after_secs` |
//! | rate | at least the source's interval between two requests |
//! | redirects | never followed |
//!
//! Errors name the URL without its secret query parameters ([`Request::public_url`]).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::time::Instant;
use url::Url;

use super::config::HttpSettings;
use crate::net::Guard;

/// What identifies the collector to the registrars' APIs.
pub const USER_AGENT: &str = concat!("tldsnap-collect/", env!("CARGO_PKG_VERSION"));

/// One request.
#[derive(Clone)]
pub struct Request {
    /// `GET` or `POST`.
    pub method: hyper::Method,
    /// The URL as sent (may hold secrets in its query).
    pub url: Url,
    /// Query parameters whose values are secrets (left out of [`Request::public_url`]).
    pub secret_params: &'static [&'static str],
    /// Headers (may hold secrets: never printed).
    pub headers: Vec<(HeaderName, String)>,
    /// Body.
    pub body: Bytes,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.public_url())
            .finish_non_exhaustive()
    }
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: Url) -> Request {
        Request {
            method: hyper::Method::GET,
            url,
            secret_params: &[],
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// A POST of `body` to `url`.
    pub fn post(url: Url, content_type: &str, body: impl Into<Bytes>) -> Request {
        Request {
            method: hyper::Method::POST,
            url,
            secret_params: &[],
            headers: vec![(header::CONTENT_TYPE, content_type.to_string())],
            body: body.into(),
        }
    }

    /// With one more header.
    pub fn header(mut self, name: HeaderName, value: impl Into<String>) -> Request {
        self.headers.push((name, value.into()));
        self
    }

    /// The URL with every secret parameter's value replaced by `***`.
    pub fn public_url(&self) -> String {
        public_url(&self.url, self.secret_params)
    }
}

/// `url` with the values of `secret` query parameters replaced by `***`.
pub fn public_url(url: &Url, secret: &[&str]) -> String {
    let mut out = url.clone();
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let hide = secret.iter().any(|s| s.eq_ignore_ascii_case(&k));
                (
                    k.into_owned(),
                    if hide {
                        "***".to_string()
                    } else {
                        v.into_owned()
                    },
                )
            })
            .collect();
        out.query_pairs_mut().clear().extend_pairs(pairs);
    }
    out.set_username("").ok();
    out.set_password(None).ok();
    out.to_string()
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`, as sent.
    pub content_type: String,
    /// The body.
    pub body: Bytes,
}

/// Why a request gave no usable answer (after its retries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one attempt gave.
enum Attempt {
    Answer(Response, Option<String>),
    /// Worth another attempt (timeout, broken connection or body).
    Transient(String),
    /// Not worth another (the guard refused, a bad URL, a body over the cap).
    Fatal(String),
}

/// The collectors' client. One per collection run; requests are one at a time.
pub struct Client {
    guard: Guard,
    tls: tokio_rustls::TlsConnector,
    settings: HttpSettings,
    last_request: std::sync::Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("guard", &self.guard)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client with `settings`, private targets allowed when `allow_private`.
    pub fn new(settings: HttpSettings, allow_private: bool) -> Result<Client, String> {
        let tls = crate::live::https::client_config(None)?;
        Ok(Client {
            guard: Guard {
                timeout: settings.timeout,
                ..Guard::new(allow_private)
            },
            tls: tokio_rustls::TlsConnector::from(tls),
            settings,
            last_request: std::sync::Mutex::new(None),
        })
    }

    /// Sends `request` (again, on transient failures, 429 and 5xx), at least
    /// `min_interval` after the previous request of this client. Returns the last
    /// answer whatever its status; fails only when no answer came.
    pub async fn send(
        &self,
        request: &Request,
        min_interval: Duration,
    ) -> Result<Response, Failure> {
        let public = request.public_url();
        let mut attempt = 0u32;
        loop {
            self.pace(min_interval).await;
            let outcome = self.attempt(request).await;
            let wait_hint = match outcome {
                Attempt::Answer(resp, retry_after)
                    if resp.status == 429 || (500..600).contains(&resp.status) =>
                {
                    if attempt >= self.settings.retries {
                        return Ok(resp);
                    }
                    let hint = retry_after.as_deref().and_then(parse_retry_after);
                    if let Some(h) = hint
                        && h > self.settings.max_retry_after
                    {
                        return Err(Failure(format!(
                            "{public}: HTTP {} with Retry-After of {} s, longer than the {} s allowed",
                            resp.status,
                            h.as_secs(),
                            self.settings.max_retry_after.as_secs()
                        )));
                    }
                    hint
                }
                Attempt::Answer(resp, _) => return Ok(resp),
                Attempt::Transient(why) => {
                    if attempt >= self.settings.retries {
                        return Err(Failure(format!(
                            "{public}: {why} (after {} attempts)",
                            attempt + 1
                        )));
                    }
                    None
                }
                Attempt::Fatal(why) => return Err(Failure(format!("{public}: {why}"))),
            };
            let wait = wait_hint.unwrap_or_else(|| self.backoff(attempt));
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Full jitter: a random wait in [0, backoff * 2^attempt], at most 30 s.
    fn backoff(&self, attempt: u32) -> Duration {
        let cap = self
            .settings
            .backoff
            .saturating_mul(1u32 << attempt.min(16))
            .min(Duration::from_secs(30));
        let mut b = [0u8; 8];
        let r = getrandom::fill(&mut b)
            .map_or(0.5, |()| u64::from_le_bytes(b) as f64 / u64::MAX as f64);
        cap.mul_f64(r)
    }

    async fn pace(&self, min_interval: Duration) {
        let wait = {
            let last = self.last_request.lock().unwrap_or_else(|e| e.into_inner());
            last.map(|t| (t + min_interval).saturating_duration_since(Instant::now()))
        };
        if let Some(w) = wait
            && !w.is_zero()
        {
            tokio::time::sleep(w).await;
        }
        *self.last_request.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    async fn attempt(&self, request: &Request) -> Attempt {
        let deadline = Instant::now() + self.settings.timeout;
        match tokio::time::timeout_at(deadline, self.exchange(request)).await {
            Err(_) => Attempt::Transient(format!(
                "no complete answer within {:.1} s",
                self.settings.timeout.as_secs_f64()
            )),
            Ok(a) => a,
        }
    }

    async fn exchange(&self, request: &Request) -> Attempt {
        let url = &request.url;
        let https = match url.scheme() {
            "https" => true,
            "http" if self.guard.allow_private => false,
            "http" => {
                return Attempt::Fatal(
                    "plain http:// is refused (credentials would cross the network unencrypted); use https:// or --allow-private-targets".to_string(),
                );
            }
            other => return Attempt::Fatal(format!("scheme {other}:// is not HTTP")),
        };
        let Some(host) = url.host_str() else {
            return Attempt::Fatal("the URL has no host".to_string());
        };
        let port = url
            .port_or_known_default()
            .unwrap_or(if https { 443 } else { 80 });
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let tcp = match self.guard.connect_host(&bare, port).await {
            Ok(tcp) => tcp,
            Err(e) if e.is_refusal() => return Attempt::Fatal(format!("refused: {e}")),
            Err(e) => return Attempt::Transient(format!("connect: {e}")),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut builder = hyper::Request::builder()
            .method(request.method.clone())
            .uri(path)
            .header(header::HOST, authority)
            .header(header::USER_AGENT, USER_AGENT)
            .header(
                header::ACCEPT,
                "application/json, application/xml;q=0.9, */*;q=0.1",
            )
            .header(header::CONNECTION, "close");
        for (name, value) in &request.headers {
            let Ok(v) = HeaderValue::from_str(value) else {
                return Attempt::Fatal(format!("header {name} is not a valid header value"));
            };
            builder = builder.header(name, v);
        }
        let req = match builder.body(Full::new(request.body.clone())) {
            Ok(r) => r,
            Err(e) => return Attempt::Fatal(format!("request: {e}")),
        };
        if https {
            let Ok(name) = ServerName::try_from(bare) else {
                return Attempt::Fatal(format!("{host} is not a TLS server name"));
            };
            match self.tls.connect(name, tcp).await {
                Ok(tls) => self.over(tls, req).await,
                Err(e) => Attempt::Transient(format!("TLS: {e}")),
            }
        } else {
            self.over(tcp, req).await
        }
    }

    async fn over<S>(&self, io: S, req: hyper::Request<Full<Bytes>>) -> Attempt
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(io)).await
        {
            Ok(x) => x,
            Err(e) => return Attempt::Transient(format!("HTTP: {e}")),
        };
        let driver = tokio::spawn(conn);
        let _abort = Abort(driver);
        let resp = match sender.send_request(req).await {
            Ok(r) => r,
            Err(e) => return Attempt::Transient(format!("HTTP: {e}")),
        };
        let (parts, body) = resp.into_parts();
        let text = |h: Option<&HeaderValue>| h.and_then(|v| v.to_str().ok()).map(str::to_string);
        let retry_after = text(parts.headers.get(header::RETRY_AFTER));
        let content_type = text(parts.headers.get(header::CONTENT_TYPE)).unwrap_or_default();
        let max = self.settings.max_body;
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|l| l > max as u64) {
            return Attempt::Fatal(format!("the answer is larger than {max} bytes"));
        }
        let body = match Limited::new(body, max).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Attempt::Fatal(format!("the answer is larger than {max} bytes"));
            }
            Err(e) => {
                return Attempt::Transient(format!(
                    "the body was cut short (HTTP {}): {e}",
                    parts.status.as_u16()
                ));
            }
        };
        Attempt::Answer(
            Response {
                status: parts.status.as_u16(),
                content_type,
                body,
            },
            retry_after,
        )
    }
}

struct Abort(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for Abort {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `Retry-After` as a wait: delay-seconds, or an HTTP date (from now).
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    crate::live::limits::parse_retry_after(v, crate::time::now_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls_hide_secret_parameters() {
        let url = Url::parse(
            "https://u:p@www.namesilo.com/api/getPrices?version=1&type=json&key=hunter2",
        )
        .unwrap();
        let p = public_url(&url, &["key"]);
        assert_eq!(
            p,
            "https://www.namesilo.com/api/getPrices?version=1&type=json&key=***"
        );
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
