//! tldsnap: the Domain Price Intelligence API as an in-memory snapshot query engine.
//!
//! Which registrar sells `.com` cheapest, what renewal and transfer cost, what five years
//! cost: every answer is computed once, when a snapshot is built, and a request only
//! copies pre-sorted, pre-rendered bytes out of a verified, zero-copy snapshot.
//!
//! # Layout
//!
//! The modules follow the data, top to bottom; every arrow points down and nothing
//! imports a module above it.
//!
//! ```text
//!  feeds/ (registrar JSON/CSV) ──import──▶ price source (CSV) ──source──▶ rows
//!        rows ──build──▶ snapshot bytes (header + rkyv archive) ──▶ file (temp + fsync + rename)
//!        file ──snapshot::Snapshot::open──▶ private copy, header checks, content hash, bytecheck (once)
//!        Snapshot ──store::Store──▶ ArcSwap, hot reload
//!        file ◀──remote──▶ S3-compatible object storage (publish; replicas follow a pointer)
//!        &ArchivedSnapshotData ──query──▶ response bodies (pure functions)
//!        bodies ──api──▶ request handlers, with access (keys, plans, credits, rate limits)
//!        handlers ──app──▶ the route table: each route once, its handler and OpenAPI operation
//!        app ──http::server──▶ hyper 1.x connections (limits, watchdog, drain)
//!        store swap ──events──▶ diff of old and new, durable event log (before the new one serves)
//!        event log ──webhooks──▶ signed POSTs, a cursor per subscription ──net──▶ checked addresses only
//! ```
//!
//! | floor | modules | role |
//! |---|---|---|
//! | base | [`tld`], [`price`], [`time`], [`json`], [`files`], [`blocking`] | names, cents, timestamps and durations, the JSON writer (escaping, cents, dates), atomic and private files, blocking work off the serving threads |
//! | input | [`source`], [`import`] | the canonical price source, real registrar feeds |
//! | engine | [`build`], [`snapshot`], [`query`], [`audit`], [`store`], [`remote`] | compile, open, answer, swap; snapshots in object storage |
//! | live | [`live`] | registration data, status, DNS, TLS and availability asked of upstreams at request time |
//! | service | [`access`], [`events`], [`webhooks`], `net`, [`http`], [`api`], [`web`] | who may ask how much; price-change events; their signed delivery to subscribers; outbound connections (the SSRF guard); connections and HTTP plumbing; the request handlers; the website |
//! | top | [`app`] | the route table and the request path over it |
//!
//! See `ARCHITECTURE.md` for the reasoning behind the snapshot format.
#![deny(missing_docs)]

pub mod access;
pub mod api;
pub mod app;
pub mod audit;
pub mod blocking;
pub mod build;
pub mod collect;
pub mod events;
pub mod files;
pub mod http;
pub mod import;
pub mod json;
pub mod live;
pub(crate) mod mapguard;
pub mod mcp;
pub(crate) mod net;
pub mod price;
pub mod query;
pub mod refresh;
pub mod remote;
pub mod sight;
pub mod snapshot;
pub mod source;
pub mod store;
pub mod time;
pub mod tld;
pub mod web;
pub mod webhooks;

/// Locks `m`, also when a panic elsewhere poisoned it, taking the data as it is: the
/// lock of the modules whose state is not left half-updated by a panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
