//! Request metrics in the Prometheus text format, kept with relaxed atomics.
//!
//! Every counter is a fixed slot in an array indexed by route and status, so recording
//! a request is two or three `fetch_add`s: no lock, no map, no allocation. A latency
//! bucket is added to after the request's counter, with `Release`, and read before the
//! counters, with `Acquire`: a scrape taken while requests are recorded never shows a
//! bucket above the histogram's `_count` (the counters by status, summed). Rendering
//! (`GET /metrics`) walks the arrays and writes text; it is the only place that
//! allocates.
//!
//! Series (all prefixed `tldsnap_`):
//!
//! | name | type | labels |
//! |---|---|---|
//! | `http_requests_total` | counter | `route` (path template or `unmatched`), `status` |
//! | `http_request_duration_seconds` | histogram | `route` |
//! | `http_connections_open` | gauge | |
//! | `http_connections_total` | counter | |
//! | `http_connection_errors_total` | counter | `kind` = `timeout`, `parse`, `incomplete`, `other`, `evicted`, `refused_per_address`, `refused_full` |
//! | `snapshot_info` | gauge (1) | `hash`, `format_version` |
//! | `snapshot_data_updated_timestamp_seconds` | gauge | |
//! | `snapshot_loaded_timestamp_seconds` | gauge | |
//! | `snapshot_tlds`, `snapshot_registrars`, `snapshot_offers` | gauge | |
//! | `snapshot_reloads_total` | counter | `result` = `success` or `failure` |
//! | `snapshot_loaded` | gauge | 1 when a snapshot is loaded |
//! | `events_last_id`, `events_kept`, `event_streams_open` | gauge | only with an event log ([`render_events`]) |
//! | `remote_state` | gauge (0/1 per state) | `state` = `waiting`, `cached`, `synced`, `stale`; only for a replica of object storage ([`render_remote`]) |
//! | `remote_polls_total` | counter | `result` = `success` or `failure` |
//! | `remote_last_success_timestamp_seconds` | gauge | 0 before the first successful poll |
//! | `remote_pointer_info` | gauge (1) | `hash`: the snapshot the store's pointer names |
//! | `snapshot_published_timestamp_seconds`, `snapshot_age_seconds` | gauge | when the served snapshot was published to object storage, and how long ago |
//! | `webhook_subscriptions` | gauge | `status` = `active`, `paused`, `disabled`; only with webhooks ([`render_webhooks`]) |
//! | `webhook_attempts_total` | counter | `result` = `delivered`, `retrying`, `disabled`, `removed`, `test` (since start) |
//! | `live_upstream_requests_total` | counter | `upstream` = `rdap`, `whois`, `dns`, `tls`; `outcome` = `ok`, `not_found`, `timeout`, `error`, `refused`, `rate_limited`; only with `--live` ([`render_live`]) |
//! | `live_upstream_request_duration_seconds` | histogram | `upstream` |
//! | `live_cache_lookups_total` | counter | `cache` = `registry`, `whois_referral`, `dns`, `tls`, `dnssec_probe`; `result` = `hit`, `miss` |
//! | `live_cache_entries` | gauge | |
//! | `registrar_newest_price_timestamp_seconds` | gauge | `registrar`: when its newest price in the served snapshot was last seen ([`render_collect`]) |
//! | `collect_last_attempt_timestamp_seconds` | gauge | `registrar`, `outcome` = `ok`, `unchanged`, `quarantined`, `failed`: its last collection attempt, read from the feeds directory; only with `--feeds` |

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering, Ordering::Relaxed};
use std::time::Duration;

use super::router::{MAX_ROUTES, Route};
pub use super::server::{ConnectionError, ConnectionEvent};

/// The statuses counted one by one; anything else lands in the last slot (`other`).
const STATUSES: [u16; 13] = [
    200, 400, 401, 403, 404, 405, 408, 414, 429, 431, 500, 503, 0,
];
/// Upper bounds of the latency histogram, in microseconds: the API answers in tens of
/// microseconds, so the buckets start there and stop at a second.
const BUCKETS_US: [u64; 12] = [
    25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 50_000, 250_000, 1_000_000,
];
/// Route slots: one per route plus one for unmatched paths.
const SLOTS: usize = MAX_ROUTES + 1;

/// Facts about the loaded snapshot, for rendering.
#[derive(Debug, Clone, Default)]
pub struct SnapshotFacts {
    /// Content hash, hex.
    pub hash_hex: String,
    /// Snapshot format version.
    pub format_version: u32,
    /// Data timestamp (newest `updated_at`), Unix milliseconds.
    pub data_updated_ms: i64,
    /// When this process loaded it, Unix milliseconds.
    pub loaded_at_ms: i64,
    /// Number of TLDs.
    pub tlds: usize,
    /// Number of registrars.
    pub registrars: usize,
    /// Number of (TLD, registrar) offers.
    pub offers: usize,
}

/// Reload outcomes, for rendering.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReloadFacts {
    /// Snapshots swapped in by a reload.
    pub successes: u64,
    /// Reloads refused (unreadable or invalid file); the old snapshot kept serving.
    pub failures: u64,
}

/// What `/metrics` reports of the price-change events, when the server keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventFacts {
    /// Id of the last event recorded (0 before any).
    pub last_id: u64,
    /// Events kept (within the retention), in memory and on disk.
    pub kept: usize,
    /// Server-Sent Events streams open now.
    pub streams_open: usize,
}

/// Appends the event gauges to a rendered exposition.
pub fn render_events(out: &mut String, facts: &EventFacts) {
    gauge(
        out,
        "events_last_id",
        "Id of the last price-change event recorded (0 before any).",
        i64::try_from(facts.last_id).unwrap_or(i64::MAX),
    );
    gauge(
        out,
        "events_kept",
        "Price-change events kept by the retention.",
        i64::try_from(facts.kept).unwrap_or(i64::MAX),
    );
    gauge(
        out,
        "event_streams_open",
        "Server-Sent Events streams of price-change events open now.",
        i64::try_from(facts.streams_open).unwrap_or(i64::MAX),
    );
}

/// What `/metrics` reports of a replica that follows a snapshot in object storage.
#[derive(Debug, Clone, Copy)]
pub struct RemoteFacts<'a> {
    /// Every state's name, and the one the replica is in.
    pub states: &'a [&'a str],
    /// The replica's state.
    pub state: &'a str,
    /// Polls of the pointer that succeeded.
    pub polls_ok: u64,
    /// Polls that failed (store unreachable, pointer or object refused).
    pub polls_failed: u64,
    /// Unix ms of the last successful poll.
    pub last_success_ms: Option<i64>,
    /// The hash the pointer named at the last read.
    pub pointer_hash: Option<&'a str>,
    /// When the served snapshot was published, Unix ms.
    pub served_published_ms: Option<i64>,
    /// Now, Unix ms (for the age).
    pub now_ms: i64,
}

/// Appends the object-storage series of a replica to a rendered exposition.
pub fn render_remote(out: &mut String, facts: &RemoteFacts<'_>) {
    out.push_str("# HELP tldsnap_remote_state The replica's standing with object storage (1 for the current state): waiting = nothing served yet, cached = serving the data directory's copy, the store not reached since start, synced = the last poll succeeded, stale = the last poll failed and the last good snapshot serves.\n");
    out.push_str("# TYPE tldsnap_remote_state gauge\n");
    for state in facts.states {
        let _ = writeln!(
            out,
            "tldsnap_remote_state{{state=\"{state}\"}} {}",
            i64::from(*state == facts.state)
        );
    }
    by_result(
        out,
        "remote_polls_total",
        "Polls of the snapshot pointer in object storage, by result.",
        facts.polls_ok,
        facts.polls_failed,
    );
    gauge_f(
        out,
        "remote_last_success_timestamp_seconds",
        "When a poll of the snapshot pointer last succeeded, Unix seconds (0: never).",
        facts.last_success_ms.unwrap_or(0) as f64 / 1e3,
    );
    if let Some(hash) = facts.pointer_hash {
        out.push_str("# HELP tldsnap_remote_pointer_info The snapshot the pointer in object storage named at the last read (value always 1).\n");
        out.push_str("# TYPE tldsnap_remote_pointer_info gauge\n");
        let _ = writeln!(out, "tldsnap_remote_pointer_info{{hash=\"{hash}\"}} 1");
    }
    if let Some(published) = facts.served_published_ms {
        gauge_f(
            out,
            "snapshot_published_timestamp_seconds",
            "When the served snapshot was published to object storage, Unix seconds.",
            published as f64 / 1e3,
        );
        gauge_f(
            out,
            "snapshot_age_seconds",
            "Seconds since the served snapshot was published to object storage.",
            (facts.now_ms - published).max(0) as f64 / 1e3,
        );
    }
}

/// The `status` labels of `webhook_subscriptions`.
pub const WEBHOOK_STATUSES: [&str; 3] = ["active", "paused", "disabled"];
/// The `result` labels of `webhook_attempts_total`.
pub const WEBHOOK_RESULTS: [&str; 5] = ["delivered", "retrying", "disabled", "removed", "test"];

/// What `/metrics` reports of the webhooks, when the server runs them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebhookFacts {
    /// Subscriptions by [`WEBHOOK_STATUSES`].
    pub subscriptions: [u64; 3],
    /// Delivery attempts since start, by [`WEBHOOK_RESULTS`].
    pub attempts: [u64; 5],
}

/// Appends the webhook gauges and counters to a rendered exposition.
pub fn render_webhooks(out: &mut String, facts: &WebhookFacts) {
    out.push_str("# HELP tldsnap_webhook_subscriptions Webhook subscriptions, by status.\n");
    out.push_str("# TYPE tldsnap_webhook_subscriptions gauge\n");
    for (status, n) in WEBHOOK_STATUSES.iter().zip(facts.subscriptions) {
        let _ = writeln!(
            out,
            "tldsnap_webhook_subscriptions{{status=\"{status}\"}} {n}"
        );
    }
    out.push_str("# HELP tldsnap_webhook_attempts_total Webhook delivery attempts since start, by what they led to (retrying: failed, another attempt is due; disabled: the last attempt failed; removed: the receiver answered 410).\n");
    out.push_str("# TYPE tldsnap_webhook_attempts_total counter\n");
    for (result, n) in WEBHOOK_RESULTS.iter().zip(facts.attempts) {
        let _ = writeln!(
            out,
            "tldsnap_webhook_attempts_total{{result=\"{result}\"}} {n}"
        );
    }
}

/// What `/metrics` reports of the registrars' freshness and their collection.
#[derive(Debug, Clone, Copy)]
pub struct CollectFacts<'a> {
    /// Per registrar key, Unix ms of its newest price in the served snapshot.
    pub newest: &'a [(&'a str, i64)],
    /// Per registrar key, its last collection attempt: outcome and Unix ms (`None`
    /// when the server is not told the feeds directory).
    pub attempts: Option<&'a [(&'a str, &'a str, i64)]>,
}

/// Appends the per-registrar freshness and collection gauges.
pub fn render_collect(out: &mut String, facts: &CollectFacts<'_>) {
    out.push_str("# HELP tldsnap_registrar_newest_price_timestamp_seconds When the registrar's newest price in the served snapshot was last seen at its source.\n");
    out.push_str("# TYPE tldsnap_registrar_newest_price_timestamp_seconds gauge\n");
    for (key, ms) in facts.newest {
        let _ = writeln!(
            out,
            "tldsnap_registrar_newest_price_timestamp_seconds{{registrar=\"{key}\"}} {}",
            seconds(*ms)
        );
    }
    let Some(attempts) = facts.attempts else {
        return;
    };
    out.push_str("# HELP tldsnap_collect_last_attempt_timestamp_seconds When the registrar's price list was last collected, labelled with how that attempt ended (ok: a new version; unchanged: the list in use again; quarantined: refused by the quality gate; failed).\n");
    out.push_str("# TYPE tldsnap_collect_last_attempt_timestamp_seconds gauge\n");
    for (key, outcome, ms) in attempts {
        let _ = writeln!(
            out,
            "tldsnap_collect_last_attempt_timestamp_seconds{{registrar=\"{key}\",outcome=\"{outcome}\"}} {}",
            seconds(*ms)
        );
    }
}

/// Unix ms as Prometheus seconds.
fn seconds(ms: i64) -> f64 {
    ms as f64 / 1e3
}

/// The server's counters. One per server, shared by every connection.
///
/// The per-request counters are split into shards, one per worker thread as far as
/// there are cores (at most `MAX_SHARDS`): a thread adds only to its own shard, so
/// the counters of every request do not move one cache line from core to core
/// (`cargo bench --bench metrics`: 92 ns a record from two threads on shared counters,
/// against 11 from one). Reading sums the shards.
#[derive(Debug)]
pub struct Metrics {
    shards: Box<[Shard]>,
    connections_open: AtomicI64,
    connections_total: AtomicU64,
    connection_errors: [AtomicU64; CONNECTION_ERRORS.len()],
}

/// Most shards of [`Metrics`]: ~10 KB each.
const MAX_SHARDS: usize = 16;

/// The per-request counters added to by one worker thread (or, past [`MAX_SHARDS`]
/// threads, by a few): on cache lines of their own.
#[derive(Debug)]
#[repr(align(128))]
struct Shard {
    requests: [[AtomicU64; STATUSES.len()]; SLOTS],
    latency_buckets: [[AtomicU64; BUCKETS_US.len()]; SLOTS],
    // No count of the latencies: every record adds one to exactly one of `requests`'
    // counters of its slot, so their sum is the histogram's `_count`.
    latency_sum_us: [AtomicU64; SLOTS],
}

impl Shard {
    fn new() -> Shard {
        Shard {
            requests: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            latency_buckets: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            latency_sum_us: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// This thread's number, given on its first record: threads take the shards in turn.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, Relaxed);
    }
    NUMBER.with(|n| *n)
}

/// The `kind` labels, in the order of [`ConnectionError`]'s variants.
const CONNECTION_ERRORS: [&str; 7] = [
    "timeout",
    "parse",
    "incomplete",
    "other",
    "evicted",
    "refused_per_address",
    "refused_full",
];

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// All counters at zero.
    pub fn new() -> Metrics {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // A power of two, so that a thread finds its shard with a mask.
        let shards = cores.min(MAX_SHARDS).next_power_of_two();
        Metrics {
            shards: (0..shards).map(|_| Shard::new()).collect(),
            connections_open: AtomicI64::new(0),
            connections_total: AtomicU64::new(0),
            connection_errors: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Records one answered request. `route` is `None` for an unmatched path.
    pub fn record(&self, route: Option<usize>, status: u16, elapsed: Duration) {
        let slot = route.unwrap_or(MAX_ROUTES).min(MAX_ROUTES);
        let status_slot = STATUSES
            .iter()
            .position(|s| *s == status)
            .unwrap_or(STATUSES.len() - 1);
        let shard = &self.shards[thread_number() & (self.shards.len() - 1)];
        shard.requests[slot][status_slot].fetch_add(1, Relaxed);
        // Seconds and microseconds apart: `as_micros` works in 128 bits.
        let us = elapsed
            .as_secs()
            .saturating_mul(1_000_000)
            .saturating_add(u64::from(elapsed.subsec_micros()));
        if let Some(bucket) = BUCKETS_US.iter().position(|b| us <= *b) {
            // Release: a scrape that sees this record in a bucket sees its status
            // counter too, which it reads after the buckets (`render`), so a histogram's
            // `_count` is never below one of its buckets.
            shard.latency_buckets[slot][bucket].fetch_add(1, Ordering::Release);
        }
        shard.latency_sum_us[slot].fetch_add(us, Relaxed);
    }

    /// The sum over the shards of one counter.
    fn sum(&self, counter: impl Fn(&Shard) -> &AtomicU64) -> u64 {
        self.sum_with(Relaxed, counter)
    }

    /// [`Self::sum`], each shard's counter loaded with `order`.
    fn sum_with(&self, order: Ordering, counter: impl Fn(&Shard) -> &AtomicU64) -> u64 {
        self.shards
            .iter()
            .map(|shard| counter(shard).load(order))
            .fold(0, u64::wrapping_add)
    }

    /// A connection was accepted.
    pub fn connection_opened(&self) {
        self.connections_open.fetch_add(1, Relaxed);
        self.connections_total.fetch_add(1, Relaxed);
    }

    /// A connection ended.
    pub fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Relaxed);
    }

    /// Connections that have ended since the server started.
    pub fn connections_ended(&self) -> u64 {
        let open = u64::try_from(self.connections_open.load(Relaxed)).unwrap_or(0);
        self.connections_total.load(Relaxed).saturating_sub(open)
    }

    /// A connection ended with an error.
    pub fn connection_error(&self, kind: ConnectionError) {
        self.connection_errors[kind as usize].fetch_add(1, Relaxed);
    }

    /// Counts what the connection layer reports.
    pub fn connection_event(&self, event: ConnectionEvent) {
        match event {
            ConnectionEvent::Opened => self.connection_opened(),
            ConnectionEvent::Closed => self.connection_closed(),
            ConnectionEvent::Error(kind) => self.connection_error(kind),
        }
    }

    /// Requests counted so far for a route (`None`: unmatched) and status.
    pub fn requests(&self, route: Option<usize>, status: u16) -> u64 {
        let slot = route.unwrap_or(MAX_ROUTES).min(MAX_ROUTES);
        STATUSES
            .iter()
            .position(|s| *s == status)
            .map_or(0, |i| self.sum(|shard| &shard.requests[slot][i]))
    }

    /// The Prometheus text exposition (format 0.0.4) of every series.
    pub fn render(
        &self,
        routes: &[Route],
        snapshot: Option<&SnapshotFacts>,
        reloads: ReloadFacts,
    ) -> String {
        let mut out = String::with_capacity(16 * 1024);
        let label = |slot: usize| match routes.get(slot) {
            Some(r) => r.path,
            None if slot == MAX_ROUTES => "unmatched",
            None => "",
        };

        out.push_str(
            "# HELP tldsnap_http_requests_total HTTP requests answered, by route and status.\n",
        );
        out.push_str("# TYPE tldsnap_http_requests_total counter\n");
        for slot in 0..SLOTS {
            for (i, status) in STATUSES.iter().enumerate() {
                let n = self.sum(|shard| &shard.requests[slot][i]);
                if n == 0 {
                    continue;
                }
                let status = if *status == 0 {
                    "other".to_owned()
                } else {
                    status.to_string()
                };
                let _ = writeln!(
                    out,
                    "tldsnap_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                    label(slot)
                );
            }
        }

        out.push_str("# HELP tldsnap_http_request_duration_seconds Time from request head to response, by route.\n");
        out.push_str("# TYPE tldsnap_http_request_duration_seconds histogram\n");
        let bounds = BUCKETS_US.map(|us| us as f64 / 1e6);
        for slot in 0..SLOTS {
            // The buckets before the count, with `Acquire` (see `record`): requests
            // recorded meanwhile make the count larger, never a bucket.
            let buckets: [u64; BUCKETS_US.len()] = std::array::from_fn(|bucket| {
                self.sum_with(Ordering::Acquire, |shard| {
                    &shard.latency_buckets[slot][bucket]
                })
            });
            let count = (0..STATUSES.len())
                .map(|i| self.sum(|shard| &shard.requests[slot][i]))
                .fold(0, u64::wrapping_add);
            if count == 0 {
                continue;
            }
            histogram_series(
                &mut out,
                "http_request_duration_seconds",
                ("route", label(slot)),
                &bounds,
                &buckets,
                count,
                self.sum(|shard| &shard.latency_sum_us[slot]) as f64 / 1e6,
            );
        }

        gauge(
            &mut out,
            "http_connections_open",
            "Connections open now.",
            self.connections_open.load(Relaxed),
        );
        counter(
            &mut out,
            "http_connections_total",
            "Connections accepted since start.",
            self.connections_total.load(Relaxed),
        );

        out.push_str("# HELP tldsnap_http_connection_errors_total Connections ended by an error or refused, by kind (parse = a request head hyper could not parse, answered 400/414/431 and closed; evicted = closed while idle to make room; refused_* = answered 429/503 at accept).\n");
        out.push_str("# TYPE tldsnap_http_connection_errors_total counter\n");
        for (i, kind) in CONNECTION_ERRORS.iter().enumerate() {
            let n = self.connection_errors[i].load(Relaxed);
            let _ = writeln!(
                out,
                "tldsnap_http_connection_errors_total{{kind=\"{kind}\"}} {n}"
            );
        }

        gauge(
            &mut out,
            "snapshot_loaded",
            "1 when a snapshot is loaded and served.",
            i64::from(snapshot.is_some()),
        );
        if let Some(s) = snapshot {
            out.push_str("# HELP tldsnap_snapshot_info The loaded snapshot (value always 1).\n");
            out.push_str("# TYPE tldsnap_snapshot_info gauge\n");
            let _ = writeln!(
                out,
                "tldsnap_snapshot_info{{hash=\"{}\",format_version=\"{}\"}} 1",
                s.hash_hex, s.format_version
            );
            gauge_f(
                &mut out,
                "snapshot_data_updated_timestamp_seconds",
                "Data date of the loaded snapshot (newest price update), Unix seconds.",
                s.data_updated_ms as f64 / 1e3,
            );
            gauge_f(
                &mut out,
                "snapshot_loaded_timestamp_seconds",
                "When the loaded snapshot was swapped in, Unix seconds.",
                s.loaded_at_ms as f64 / 1e3,
            );
            gauge(
                &mut out,
                "snapshot_tlds",
                "TLDs in the loaded snapshot.",
                s.tlds as i64,
            );
            gauge(
                &mut out,
                "snapshot_registrars",
                "Registrars in the loaded snapshot.",
                s.registrars as i64,
            );
            gauge(
                &mut out,
                "snapshot_offers",
                "(TLD, registrar) price rows in the loaded snapshot.",
                s.offers as i64,
            );
        }
        by_result(
            &mut out,
            "snapshot_reloads_total",
            "Snapshot reloads, by result; a failure keeps the old snapshot.",
            reloads.successes,
            reloads.failures,
        );
        out
    }
}

/// The series of one histogram for one label value: the cumulative `_bucket` lines up
/// to each bound (seconds) and `+Inf`, `_sum` (seconds) and `_count`. `buckets` are
/// the counts of each bound's bucket alone.
fn histogram_series(
    out: &mut String,
    name: &str,
    (key, value): (&str, &str),
    bounds: &[f64],
    buckets: &[u64],
    count: u64,
    sum: f64,
) {
    let mut cumulative = 0;
    for (le, n) in bounds.iter().zip(buckets) {
        cumulative += n;
        let _ = writeln!(
            out,
            "tldsnap_{name}_bucket{{{key}=\"{value}\",le=\"{le}\"}} {cumulative}"
        );
    }
    let _ = writeln!(
        out,
        "tldsnap_{name}_bucket{{{key}=\"{value}\",le=\"+Inf\"}} {count}"
    );
    let _ = writeln!(out, "tldsnap_{name}_sum{{{key}=\"{value}\"}} {sum}");
    let _ = writeln!(out, "tldsnap_{name}_count{{{key}=\"{value}\"}} {count}");
}

/// What `/metrics` reports of the live lookups, when the server makes them.
#[derive(Debug, Clone, Copy)]
pub struct LiveFacts<'a> {
    /// The `outcome` labels.
    pub outcomes: &'a [&'a str],
    /// Per `upstream` label: its requests by outcome (in `outcomes`' order).
    pub requests: &'a [(&'a str, &'a [u64])],
    /// The duration histogram's bounds, in seconds.
    pub bounds: &'a [f64],
    /// Per `upstream` label: requests sent by bucket (not cumulative), how many were
    /// sent, and their durations added up, in seconds.
    pub durations: &'a [(&'a str, &'a [u64], u64, f64)],
    /// Per `cache` label: hits and misses.
    pub cache: &'a [(&'a str, u64, u64)],
    /// Answers the cache holds now.
    pub cache_entries: u64,
}

/// Appends the live lookups' series to a rendered exposition.
pub fn render_live(out: &mut String, facts: &LiveFacts<'_>) {
    out.push_str("# HELP tldsnap_live_upstream_requests_total Requests of the live lookups to upstreams, by kind of upstream and outcome (ok; not_found: RDAP 404, WHOIS no match, NXDOMAIN; timeout; error; refused: not sent, tldsnap held back or the address was refused; rate_limited: the upstream answered 429 or 503).\n");
    out.push_str("# TYPE tldsnap_live_upstream_requests_total counter\n");
    for (upstream, counts) in facts.requests {
        for (outcome, n) in facts.outcomes.iter().zip(counts.iter()) {
            let _ = writeln!(
                out,
                "tldsnap_live_upstream_requests_total{{upstream=\"{upstream}\",outcome=\"{outcome}\"}} {n}"
            );
        }
    }
    out.push_str("# HELP tldsnap_live_upstream_request_duration_seconds Time of the requests sent to upstreams (refused ones are not), by kind of upstream.\n");
    out.push_str("# TYPE tldsnap_live_upstream_request_duration_seconds histogram\n");
    for (upstream, buckets, count, sum) in facts.durations {
        histogram_series(
            out,
            "live_upstream_request_duration_seconds",
            ("upstream", upstream),
            facts.bounds,
            buckets,
            *count,
            *sum,
        );
    }
    out.push_str("# HELP tldsnap_live_cache_lookups_total Live answers asked of the cache, by kind of answer and result (hit: served without a lookup of the caller's own, from the cache or by joining one on its way; miss: a lookup ran).\n");
    out.push_str("# TYPE tldsnap_live_cache_lookups_total counter\n");
    for (cache, hits, misses) in facts.cache {
        let _ = writeln!(
            out,
            "tldsnap_live_cache_lookups_total{{cache=\"{cache}\",result=\"hit\"}} {hits}"
        );
        let _ = writeln!(
            out,
            "tldsnap_live_cache_lookups_total{{cache=\"{cache}\",result=\"miss\"}} {misses}"
        );
    }
    gauge(
        out,
        "live_cache_entries",
        "Live answers held by the cache now (approximate).",
        i64::try_from(facts.cache_entries).unwrap_or(i64::MAX),
    );
}

/// A counter with a `result` label, `success` and `failure`.
fn by_result(out: &mut String, name: &str, help: &str, successes: u64, failures: u64) {
    let _ = write!(
        out,
        "# HELP tldsnap_{name} {help}\n# TYPE tldsnap_{name} counter\n\
         tldsnap_{name}{{result=\"success\"}} {successes}\n\
         tldsnap_{name}{{result=\"failure\"}} {failures}\n"
    );
}

fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    let _ = write!(
        out,
        "# HELP tldsnap_{name} {help}\n# TYPE tldsnap_{name} gauge\ntldsnap_{name} {value}\n"
    );
}

fn gauge_f(out: &mut String, name: &str, help: &str, value: f64) {
    let _ = write!(
        out,
        "# HELP tldsnap_{name} {help}\n# TYPE tldsnap_{name} gauge\ntldsnap_{name} {value}\n"
    );
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = write!(
        out,
        "# HELP tldsnap_{name} {help}\n# TYPE tldsnap_{name} counter\ntldsnap_{name} {value}\n"
    );
}

/// Copies of counters taken while other threads add to them: the tests of a metric's
/// consistency under concurrent records (here and in [`crate::live::stats`]).
#[cfg(test)]
pub(crate) fn copies_while_recording<T: Send>(
    record: impl Fn() + Sync,
    recorded: impl Fn() -> bool,
    copies: usize,
    mut take: impl FnMut() -> T,
) -> Vec<T> {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !done.load(Relaxed) {
                    record();
                }
            });
        }
        while !recorded() {
            std::thread::yield_now();
        }
        let taken = (0..copies).map(|_| take()).collect();
        // Before any assertion on the copies: a failing test must not leave the
        // recorders running (the scope would wait for them for ever).
        done.store(true, Relaxed);
        taken
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::router::GET_HEAD;

    /// A table whose route 0 is the cheapest endpoint and route 6 `/healthz`.
    fn routes() -> Vec<Route> {
        (0..7)
            .map(|i| {
                let path = match i {
                    0 => "/api/v1/client/prices/cheapest",
                    6 => "/healthz",
                    _ => "/other",
                };
                Route::new(i, path, GET_HEAD, false, false)
            })
            .collect()
    }

    #[test]
    fn ended_connections_are_the_closed_ones() {
        let m = Metrics::new();
        assert_eq!(m.connections_ended(), 0);
        for _ in 0..3 {
            m.connection_event(ConnectionEvent::Opened);
        }
        m.connection_event(ConnectionEvent::Error(ConnectionError::Timeout));
        m.connection_event(ConnectionEvent::Closed);
        assert_eq!(m.connections_ended(), 1);
        m.connection_event(ConnectionEvent::Closed);
        assert_eq!(m.connections_ended(), 2);
    }

    #[test]
    fn records_from_many_threads_add_up_across_the_shards() {
        let m = Metrics::new();
        // More threads than shards: some share one, and still nothing is lost.
        let threads = MAX_SHARDS + 3;
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    for _ in 0..1000 {
                        m.record(Some(0), 200, Duration::from_micros(30));
                    }
                });
            }
        });
        let n = (threads * 1000) as u64;
        assert_eq!(m.requests(Some(0), 200), n);
        let text = m.render(&routes(), None, ReloadFacts::default());
        let cheapest = "route=\"/api/v1/client/prices/cheapest\"";
        assert!(text.contains(&format!(
            "tldsnap_http_request_duration_seconds_bucket{{{cheapest},le=\"0.00005\"}} {n}\n"
        )));
        assert!(text.contains(&format!(
            "tldsnap_http_request_duration_seconds_count{{{cheapest}}} {n}\n"
        )));
    }

    #[test]
    fn a_scrape_during_records_never_shows_a_bucket_above_the_count() {
        let m = Metrics::new();
        let route = "route=\"/api/v1/client/prices/cheapest\"";
        let bucket_prefix = format!("tldsnap_http_request_duration_seconds_bucket{{{route},le=\"");
        let count_prefix = format!("tldsnap_http_request_duration_seconds_count{{{route}}} ");
        // Each scrape's (buckets, count), taken while two threads record.
        let scrapes = copies_while_recording(
            || m.record(Some(0), 200, Duration::from_micros(30)),
            || m.requests(Some(0), 200) > 0,
            500,
            || {
                let text = m.render(&routes(), None, ReloadFacts::default());
                let buckets: Vec<u64> = text
                    .lines()
                    .filter_map(|l| l.strip_prefix(bucket_prefix.as_str()))
                    .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
                    .collect();
                let count: u64 = text
                    .lines()
                    .find_map(|l| l.strip_prefix(count_prefix.as_str()))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                (buckets, count)
            },
        );
        for (buckets, count) in scrapes {
            assert_eq!(buckets.len(), BUCKETS_US.len() + 1, "every bucket and +Inf");
            assert_eq!(buckets.last(), Some(&count), "+Inf is the count");
            for b in &buckets {
                assert!(*b <= count, "a bucket of {b} above the count {count}");
            }
        }
    }

    #[test]
    fn records_and_renders() {
        let m = Metrics::new();
        m.record(Some(0), 200, Duration::from_micros(30));
        m.record(Some(0), 200, Duration::from_micros(3_000_000));
        m.record(None, 404, Duration::from_micros(10));
        m.record(Some(6), 299, Duration::from_micros(10));
        m.connection_error(ConnectionError::Parse);
        assert_eq!(m.requests(Some(0), 200), 2);
        assert_eq!(m.requests(None, 404), 1);
        let facts = SnapshotFacts {
            hash_hex: "ab12".into(),
            format_version: 1,
            data_updated_ms: 1_700_000_000_000,
            ..Default::default()
        };
        let text = m.render(
            &routes(),
            Some(&facts),
            ReloadFacts {
                successes: 3,
                failures: 1,
            },
        );
        assert!(text.contains("tldsnap_http_requests_total{route=\"/api/v1/client/prices/cheapest\",status=\"200\"} 2\n"));
        assert!(
            text.contains("tldsnap_http_requests_total{route=\"unmatched\",status=\"404\"} 1\n")
        );
        assert!(
            text.contains("tldsnap_http_requests_total{route=\"/healthz\",status=\"other\"} 1\n")
        );
        assert!(text.contains("tldsnap_http_request_duration_seconds_bucket{route=\"/api/v1/client/prices/cheapest\",le=\"0.00005\"} 1\n"));
        assert!(text.contains("tldsnap_http_request_duration_seconds_bucket{route=\"/api/v1/client/prices/cheapest\",le=\"1\"} 1\n"));
        assert!(text.contains("tldsnap_http_request_duration_seconds_bucket{route=\"/api/v1/client/prices/cheapest\",le=\"+Inf\"} 2\n"));
        assert!(text.contains("tldsnap_snapshot_info{hash=\"ab12\",format_version=\"1\"} 1\n"));
        assert!(text.contains("tldsnap_snapshot_data_updated_timestamp_seconds 1700000000\n"));
        assert!(text.contains("tldsnap_snapshot_reloads_total{result=\"failure\"} 1\n"));
        assert!(text.contains("tldsnap_http_connection_errors_total{kind=\"parse\"} 1\n"));
        assert!(text.contains("tldsnap_http_connection_errors_total{kind=\"timeout\"} 0\n"));
        let mut text = text;
        render_remote(
            &mut text,
            &RemoteFacts {
                states: &["waiting", "cached", "synced", "stale"],
                state: "cached",
                polls_ok: 0,
                polls_failed: 4,
                last_success_ms: None,
                pointer_hash: None,
                served_published_ms: Some(1_700_000_000_000),
                now_ms: 1_700_000_090_500,
            },
        );
        assert!(text.contains("tldsnap_remote_state{state=\"cached\"} 1\n"));
        assert!(text.contains("tldsnap_remote_state{state=\"synced\"} 0\n"));
        assert!(text.contains("tldsnap_remote_polls_total{result=\"failure\"} 4\n"));
        assert!(text.contains("tldsnap_remote_last_success_timestamp_seconds 0\n"));
        assert!(!text.contains("remote_pointer_info"));
        assert!(text.contains("tldsnap_snapshot_age_seconds 90.5\n"));
        render_live(
            &mut text,
            &LiveFacts {
                outcomes: &["ok", "timeout"],
                requests: &[("rdap", &[3, 1]), ("dns", &[0, 0])],
                bounds: &[0.01, 1.0],
                durations: &[("rdap", &[2, 1], 4, 7.5), ("dns", &[0, 0], 0, 0.0)],
                cache: &[("registry", 5, 4)],
                cache_entries: 4,
            },
        );
        assert!(text.contains(
            "tldsnap_live_upstream_requests_total{upstream=\"rdap\",outcome=\"timeout\"} 1\n"
        ));
        assert!(text.contains(
            "tldsnap_live_upstream_request_duration_seconds_bucket{upstream=\"rdap\",le=\"1\"} 3\n"
        ));
        assert!(text.contains(
            "tldsnap_live_upstream_request_duration_seconds_bucket{upstream=\"rdap\",le=\"+Inf\"} 4\n"
        ));
        assert!(text.contains(
            "tldsnap_live_upstream_request_duration_seconds_sum{upstream=\"rdap\"} 7.5\n"
        ));
        assert!(
            text.contains(
                "tldsnap_live_cache_lookups_total{cache=\"registry\",result=\"miss\"} 4\n"
            )
        );
        assert!(text.contains("tldsnap_live_cache_entries 4\n"));
        // Every line is a comment or `name{labels} value`.
        for line in text.lines() {
            assert!(
                line.starts_with("# ") || line.starts_with("tldsnap_"),
                "{line}"
            );
        }
    }
}
