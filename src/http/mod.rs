//! HTTP plumbing on bare hyper 1.x: the connection layer and what every handler shares
//! (routes, parameters, errors, metrics, the OpenAPI document). The handlers themselves
//! are in [`crate::api`], above this module.
//!
//! # Layout
//!
//! | file | role |
//! |---|---|
//! | [`server`] | `run(listener, handler, config, shutdown)`: accept loop, connection limits, idle eviction, watchdog, hyper settings, graceful drain; knows only a [`server::Handler`] |
//! | `socket` | a connection's reads and writes as system calls of their own (no C-library cancellation point), with tokio's readiness |
//! | [`body`] | the response body: one chunk, shared bytes or the query's own buffer |
//! | [`router`] | the route table, the one list of paths (also used by metrics and the OpenAPI test) |
//! | [`params`] | percent-decoding and the parameter rules of docs/API.md |
//! | [`problem`] | the one place that maps errors to status and `application/problem+json` |
//! | [`metrics`] | lock-free counters (the per-request ones sharded per worker thread) and the Prometheus text |
//! | [`openapi`] | the OpenAPI 3.1 document of every route |
//!
//! The HTTP layer knows nothing of rkyv: it hands canonical names to [`crate::query`]
//! and sends the bytes that come back. See `docs/API.md` for every endpoint, error and
//! decision.

pub mod body;
pub mod metrics;
pub mod openapi;
pub mod params;
pub mod problem;
pub mod router;
pub mod server;
mod socket;

pub use server::{Config, Handler, run};

use hyper::header::{HeaderMap, HeaderName, HeaderValue};

/// Set by the proxy that ends TLS in front of the service: the scheme the client used.
pub const FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
/// `Strict-Transport-Security`, on every answer to a request that came over HTTPS.
pub const HSTS: HeaderName = HeaderName::from_static("strict-transport-security");
/// Its value: browsers keep to HTTPS on this host for a year. Not for subdomains (they
/// may be other services) and no preload (that is the operator's choice to make).
pub const HSTS_VALUE: HeaderValue = HeaderValue::from_static("max-age=31536000");

/// Whether a request came over HTTPS. The service speaks plain HTTP, so only a proxy
/// in front that ends TLS knows; it says so in `X-Forwarded-Proto` (the first value
/// of the first header: the scheme the client used). Anyone can send that header, so it
/// counts only when `trust_proxy` (`serve --trust-proxy`) says every request comes
/// through such a proxy, which sets it.
pub fn came_over_https(headers: &HeaderMap, trust_proxy: bool) -> bool {
    trust_proxy
        && headers.get(FORWARDED_PROTO).is_some_and(|v| {
            let first = v
                .as_bytes()
                .split(|b| *b == b',')
                .next()
                .unwrap_or_default();
            first.trim_ascii().eq_ignore_ascii_case(b"https")
        })
}

/// `a == b`, compiled inline: eight bytes at a time, then the rest a byte at a time.
/// For the short strings a request is matched by (a route's prefix, a kept answer's
/// plan and query) this costs less than `==` on slices, which calls the C library's
/// `memcmp` (a call and its dispatch for ~10-20 bytes: ~15-20 ns natively, measured with
/// `tools/loadtest.d/native`).
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or_default());
    let (mut a8, mut b8) = (a.chunks_exact(8), b.chunks_exact(8));
    a8.by_ref()
        .zip(b8.by_ref())
        .all(|(x, y)| word(x) == word(y))
        && a8
            .remainder()
            .iter()
            .zip(b8.remainder())
            .all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::{came_over_https, same_bytes};

    #[test]
    fn https_is_the_trusted_proxys_word_only() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(super::FORWARDED_PROTO, HeaderValue::from_str(v).unwrap());
            h
        };
        use hyper::header::{HeaderMap, HeaderValue};
        assert!(came_over_https(&with("https"), true));
        assert!(came_over_https(&with("HTTPS"), true));
        assert!(came_over_https(&with("https, http"), true));
        assert!(!came_over_https(&with("https"), false), "not trusted");
        assert!(!came_over_https(&with("http"), true));
        assert!(!came_over_https(&with("http, https"), true));
        assert!(!came_over_https(&with("httpsx"), true));
        assert!(!came_over_https(&HeaderMap::new(), true));
    }

    #[test]
    fn same_bytes_is_slice_equality() {
        let words: [&[u8]; 9] = [
            b"",
            b"a",
            b"b",
            b"enterprise",
            b"enterprisf",
            b"tlds=com&limit=5",
            b"tlds=com&limit=6",
            b"/api/v1/client/",
            b"/api/v1/client/x",
        ];
        for a in words {
            for b in words {
                assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
            }
        }
        // A difference at every position, in the words and in the rest, of every length
        // up to five words and a half.
        for len in 0..=44u8 {
            let s: Vec<u8> = (0..len).map(|i| b'0' + i).collect();
            assert!(same_bytes(&s, &s.clone()));
            for i in 0..s.len() {
                let mut other = s.clone();
                other[i] ^= 1;
                assert!(!same_bytes(&s, &other), "{len} {i}");
                assert!(!same_bytes(&other, &s), "{len} {i}");
            }
        }
    }
}
