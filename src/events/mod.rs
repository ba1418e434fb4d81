//! Price-change events: what changed between two snapshots, kept in a durable log.
//!
//! Every snapshot swap is exactly the moment prices change. When the store is about to
//! swap a snapshot in, [`EventLog`] (a [`crate::store::SwapObserver`]) diffs the snapshot
//! being served against the new one and appends the events to an append-only file in the
//! data directory, fsynced, *before* the new snapshot serves; if that fails the swap is
//! refused and the old snapshot keeps serving, so no swap is ever served without its
//! events. `docs/EVENTS.md` describes the payloads, ids, ordering and durability.
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`diff`](mod@diff) | the changes between two snapshots: a merge of their pre-sorted arrays, `O(size)` |
//! | [`render`] | the JSON of an event (envelope and data), written once per event |
//! | [`log`] | the durable log: framed, checksummed records; torn tails dropped; replays skipped; retention |
//! | [`shared`] | several replicas: the swaps and their events registered once in Redis, every replica's log a mirror |
//!
//! ```text
//!  Store::reload ──before swap──▶ EventLog::before_swap(old, new)
//!                                   ├─ diff::diff(old.data(), new.data())  → [Change]
//!                                   ├─ render::event_json(..)              → one JSON object per event
//!                                   └─ append one record (all events of the swap), fsync
//!                                 ◀─ Ok: the store swaps; Err: the swap is refused
//! ```
//!
//! The room knows snapshots and the store's hook, nothing of HTTP: delivery (polling,
//! streaming) reads [`EventLog::read`] and waits on [`EventLog::subscribe`].

pub mod diff;
pub mod log;
pub mod render;
pub mod shared;

pub use diff::{Change, Kind, Prices, diff};
pub use log::{EventLog, Filter, LogError, Stored};
