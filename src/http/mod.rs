//! The HTTP API on bare hyper (issue 4).
pub mod metrics;
pub mod params;
pub mod problem;
pub mod router;
