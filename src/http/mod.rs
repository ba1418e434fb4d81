//! The HTTP API on bare hyper 1.x: routing, parameters, access checks, rendering of
//! errors, metrics, and the server loop.
//!
//! # Layout
//!
//! | file | role |
//! |---|---|
//! | [`server`] | `run(listener, state, shutdown)`: accept loop, connection limit, hyper settings, graceful drain |
//! | [`body`] | the response body: one chunk, shared bytes or the query's own buffer |
//! | [`api`] | the request pipeline: size limits, route, method, access, parameters, plan, query, credits |
//! | [`router`] | the route table, the one list of paths (also used by metrics and the OpenAPI test) |
//! | [`params`] | percent-decoding and the contract's parameter rules |
//! | [`problem`] | the one place that maps errors to status and `application/problem+json` |
//! | [`metrics`] | lock-free counters and the Prometheus text |
//! | [`openapi`] | the OpenAPI 3.1 document of every route |
//!
//! The HTTP layer knows nothing of rkyv: it hands canonical names to [`crate::query`]
//! and sends the bytes that come back. See `docs/API.md` for every endpoint, error and
//! decision.

pub mod api;
pub mod body;
pub mod metrics;
pub mod openapi;
pub mod params;
pub mod problem;
pub mod router;
pub mod server;

pub use server::{Config, State, run};
