//! What the live lookups did, for `/metrics`: per kind of upstream, every request
//! tldsnap sent or held back and what it came to, and how long the ones sent took.
//! Fixed slots of relaxed atomics (as the server's own request metrics): counting is a
//! `fetch_add`, no lock, no map; a duration's bucket is added to after `sent`, with
//! `Release`, and read before it, with `Acquire`, so that no copy shows a bucket above
//! the count. The cache counts its hits and misses itself
//! ([`super::cache::Cache::counts`]); [`crate::http::metrics::render_live`] writes both.
//!
//! One request is one question to one upstream: an RDAP GET (each redirect is one), a
//! WHOIS exchange (IANA's referral is one, the registry's another), a DNS query (one
//! per record type; a DNSSEC question can add one with checking disabled, and the
//! resolver check of the root), a TLS handshake. Answers from the cache send nothing
//! and are not requests.

use std::sync::atomic::{AtomicU64, Ordering, Ordering::Relaxed};
use std::time::Duration;

/// The kinds of upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upstream {
    /// A registry's RDAP server.
    Rdap,
    /// A WHOIS server (IANA's referral, a registry's).
    Whois,
    /// The DNS resolver.
    Dns,
    /// A domain's TLS server.
    Tls,
}

impl Upstream {
    /// Every kind, in slot order.
    pub const ALL: [Upstream; 4] = [
        Upstream::Rdap,
        Upstream::Whois,
        Upstream::Dns,
        Upstream::Tls,
    ];

    /// The `upstream` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Upstream::Rdap => "rdap",
            Upstream::Whois => "whois",
            Upstream::Dns => "dns",
            Upstream::Tls => "tls",
        }
    }
}

/// What one request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An answer: registration data, a DNS answer with records (or NODATA), a TLS
    /// handshake (whatever the certificate), a redirect, a WHOIS text.
    Ok,
    /// An answer saying the name does not exist: RDAP 404, a WHOIS "no match", NXDOMAIN.
    NotFound,
    /// No answer in time.
    Timeout,
    /// A failure: an HTTP error, garbage, too large, a connection or TLS failure, a
    /// DNS SERVFAIL / REFUSED / FORMERR.
    Error,
    /// Not sent: tldsnap held back (the breaker is open, the upstream's `Retry-After`
    /// runs, no slot of its pace fits the budget) or the outbound guard refused the
    /// address.
    Refused,
    /// The upstream asked for a pause: HTTP 429 or 503.
    RateLimited,
}

impl Outcome {
    /// Every outcome, in slot order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::NotFound,
        Outcome::Timeout,
        Outcome::Error,
        Outcome::Refused,
        Outcome::RateLimited,
    ];

    /// The `outcome` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::NotFound => "not_found",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
            Outcome::Refused => "refused",
            Outcome::RateLimited => "rate_limited",
        }
    }
}

/// Upper bounds of the request duration histogram, in milliseconds: registries answer
/// in tens to hundreds of milliseconds, and a lookup's budget is 10 s.
pub const LATENCY_BOUNDS_MS: [u64; 11] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

const UPSTREAMS: usize = Upstream::ALL.len();
const OUTCOMES: usize = Outcome::ALL.len();
const BUCKETS: usize = LATENCY_BOUNDS_MS.len();

/// The counters. One per [`super::Live`].
#[derive(Debug)]
pub struct Stats {
    requests: [[AtomicU64; OUTCOMES]; UPSTREAMS],
    buckets: [[AtomicU64; BUCKETS]; UPSTREAMS],
    sent: [AtomicU64; UPSTREAMS],
    sum_us: [AtomicU64; UPSTREAMS],
}

/// A copy of the counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Requests per upstream kind ([`Upstream::ALL`]) and outcome ([`Outcome::ALL`]).
    pub requests: [[u64; OUTCOMES]; UPSTREAMS],
    /// Requests sent per upstream kind, by duration bucket ([`LATENCY_BOUNDS_MS`]; not
    /// cumulative; slower than the last bound: only in `sent`).
    pub buckets: [[u64; BUCKETS]; UPSTREAMS],
    /// Requests sent (timed) per upstream kind.
    pub sent: [u64; UPSTREAMS],
    /// Their durations added up, in microseconds.
    pub sum_us: [u64; UPSTREAMS],
}

/// What `/metrics` shows of the live lookups ([`super::Live::report`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The requests to upstreams.
    pub upstreams: Counts,
    /// Per cache kind ([`super::cache::Kind::ALL`]): hits and misses.
    pub cache: [[u64; 2]; super::cache::Kind::ALL.len()],
    /// Answers held by the cache now (approximate).
    pub cache_entries: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            requests: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            buckets: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            sent: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_us: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Stats {
    /// Counts one request to an `upstream` of this kind and what it came to.
    pub fn count(&self, upstream: Upstream, outcome: Outcome) {
        self.requests[upstream as usize][outcome as usize].fetch_add(1, Relaxed);
    }

    /// Times one request that was sent (answered or not).
    pub fn took(&self, upstream: Upstream, elapsed: Duration) {
        let i = upstream as usize;
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        // The count first, the bucket with `Release` after it: `counts`, which reads
        // the buckets (`Acquire`) before the counts, never sees a request in a bucket
        // and not in `sent`, so a histogram's `_count` is never below a bucket.
        self.sent[i].fetch_add(1, Relaxed);
        if let Some(b) = LATENCY_BOUNDS_MS.iter().position(|ms| us <= ms * 1000) {
            self.buckets[i][b].fetch_add(1, Ordering::Release);
        }
        self.sum_us[i].fetch_add(us, Relaxed);
    }

    /// Counts and times one request that was sent.
    pub fn sent(&self, upstream: Upstream, outcome: Outcome, elapsed: Duration) {
        self.count(upstream, outcome);
        self.took(upstream, elapsed);
    }

    /// The counters now.
    pub fn counts(&self) -> Counts {
        let load = |a: &AtomicU64| a.load(Relaxed);
        // The buckets before `sent` (see `took`).
        let buckets = self
            .buckets
            .each_ref()
            .map(|r| r.each_ref().map(|a| a.load(Ordering::Acquire)));
        Counts {
            requests: self.requests.each_ref().map(|r| r.each_ref().map(load)),
            buckets,
            sent: self.sent.each_ref().map(load),
            sum_us: self.sum_us.each_ref().map(load),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_taken_while_requests_are_timed_never_show_a_bucket_above_sent() {
        let s = Stats::default();
        let rdap = Upstream::Rdap as usize;
        // Copies taken while two threads time requests.
        let copies = crate::http::metrics::copies_while_recording(
            || s.took(Upstream::Rdap, Duration::from_millis(30)),
            || s.counts().sent[rdap] > 0,
            20_000,
            || s.counts(),
        );
        for c in copies {
            let in_buckets: u64 = c.buckets[rdap].iter().sum();
            assert!(
                in_buckets <= c.sent[rdap],
                "{in_buckets} in the buckets, {} sent",
                c.sent[rdap]
            );
        }
    }

    #[test]
    fn counts_and_times() {
        let s = Stats::default();
        s.sent(Upstream::Rdap, Outcome::Ok, Duration::from_millis(30));
        s.sent(Upstream::Rdap, Outcome::NotFound, Duration::from_secs(20));
        s.count(Upstream::Rdap, Outcome::Refused);
        s.sent(Upstream::Dns, Outcome::Timeout, Duration::from_millis(5));
        let c = s.counts();
        let rdap = Upstream::Rdap as usize;
        assert_eq!(c.requests[rdap], [1, 1, 0, 0, 1, 0]);
        assert_eq!(c.sent[rdap], 2);
        // 30 ms in the 50 ms bucket; 20 s beyond the last bound.
        assert_eq!(c.buckets[rdap].iter().sum::<u64>(), 1);
        assert_eq!(c.buckets[rdap][3], 1);
        assert_eq!(c.sum_us[rdap], 20_030_000);
        assert_eq!(c.buckets[Upstream::Dns as usize][0], 1);
        assert_eq!(c.requests[Upstream::Tls as usize], [0; 6]);
    }
}
