//! HTTP plumbing on bare hyper 1.x: the connection layer and what every handler shares
//! (routes, parameters, errors, metrics, the OpenAPI document). The handlers themselves
//! are in [`crate::api`], above this module.
//!
//! # Layout
//!
//! | file | role |
//! |---|---|
//! | [`server`] | `run(listener, handler, config, shutdown)`: accept loop, connection limits, idle eviction, watchdog, hyper settings, graceful drain; knows only a [`server::Handler`] |
//! | [`body`] | the response body: one chunk, shared bytes or the query's own buffer |
//! | [`router`] | the route table, the one list of paths (also used by metrics and the OpenAPI test) |
//! | [`params`] | percent-decoding and the contract's parameter rules |
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

pub use server::{Config, Handler, run};
