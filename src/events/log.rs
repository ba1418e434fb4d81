//! The durable event log: `DATA_DIR/events.log`, append-only, one record per swap.
//!
//! ```text
//! file    = header record*
//! header  = "TLDSEVT\0"  version:u32=1  reserved:u32=0  base_id:u64        (24 bytes, LE)
//! record  = len:u32  check:u64  payload[len]                                  (LE)
//! check   = xxh3-64 of the payload, seeded with len  (a flipped length fails it too)
//! payload = JSON lines: the swap   {"from":hex,"to":hex,"at_ms":N,"first_id":N,"count":N}
//!           then `count` events, each exactly the JSON delivered to clients
//! ```
//!
//! - **Ids** increase by one per event, across swaps, restarts and compactions: the next
//!   id is one past the last recorded event, or `base_id` (written by compaction) if
//!   that is larger.
//! - **Atomic swaps.** All events of a swap are one record: a reader after a crash sees
//!   all of a swap's events or none.
//! - **Durability.** A record is written at the end of the known-good bytes and
//!   `fdatasync`ed before [`EventLog::append`] returns, which is before the store swaps
//!   the new snapshot in (the store's [`SwapObserver`] hook).
//! - **Torn tails.** A crash (`kill -9`, power loss) can leave the last record partly
//!   written. Opening reads records in order and stops at the first one that is short,
//!   runs past the end of the file, or fails its checksum; that record and everything
//!   after it are dropped — the file is truncated there — and never parsed. Only the
//!   last append can be torn (each append is synced before the next starts), so what is
//!   dropped was never acknowledged: its swap was refused and never served. A record
//!   whose checksum holds but whose JSON does not parse is not a torn write but a bug or
//!   a hand edit: opening refuses the file rather than guess.
//! - **Replays.** A swap is identified by its (old hash, new hash) pair. A pair already
//!   recorded is a replay (a restart on the old file swapping to the new one again, or a
//!   second reload of the same file) and records nothing — unless a later swap arrived
//!   back at the old snapshot (A→B, B→A, A→B: the third swap is a real change for
//!   clients, who were told about B→A).
//! - **Retention.** Swaps recorded longer ago than the retention (default 90 days) are
//!   removed by rewriting the file with [`crate::files::write_atomic_mode`] (temp file,
//!   fsync, rename, fsync of the directory; owner-only, like the rest of the data
//!   directory), at open and after an append that finds an expired swap. `base_id`
//!   keeps ids increasing when everything expired. A temporary file that a crash left
//!   behind is removed at open.
//!
//! One process writes a log: two servers must not share a data directory.

use std::collections::HashSet;
use std::fmt;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::Deserialize;
use twox_hash::XxHash3_64;

use super::diff::{Change, Kind, diff};
use super::render::{Envelope, write_event, write_hash};
use super::shared::Shared;
// A poisoned lock only means a panic elsewhere; the log's state is updated in an order
// that keeps it consistent (memory after the file).
use crate::access::clock::Clock;
use crate::files::{self, Mode};
use crate::lock;
use crate::snapshot::Snapshot;
use crate::store::SwapObserver;

/// The file name inside the data directory.
pub const FILE_NAME: &str = "events.log";
/// Default retention: 90 days.
pub const DEFAULT_RETENTION_MS: i64 = 90 * crate::time::MS_PER_DAY;

const MAGIC: [u8; 8] = *b"TLDSEVT\0";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 24;
const FRAME_LEN: usize = 12;

/// Why the log could not be opened or written.
#[derive(Debug)]
pub enum LogError {
    /// Reading, writing or syncing the file failed.
    Io {
        /// The log file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not an event log, or a record that passed its checksum is not valid.
    Corrupt {
        /// The log file.
        path: PathBuf,
        /// What is wrong, with the byte offset.
        why: String,
    },
    /// One swap's events do not fit in one record (4 GiB).
    TooLarge(usize),
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Io { path, source } => write!(f, "event log {}: {source}", path.display()),
            LogError::Corrupt { path, why } => {
                write!(f, "event log {} is corrupt: {why}", path.display())
            }
            LogError::TooLarge(n) => write!(f, "one swap's events take {n} bytes, over 4 GiB"),
        }
    }
}

impl std::error::Error for LogError {}

/// One recorded event as readers get it.
#[derive(Debug)]
pub struct Stored {
    /// The event id.
    pub id: u64,
    /// Its type.
    pub kind: Kind,
    /// The TLD.
    pub tld: Box<str>,
    /// The registrar (for `ranking.changed`, the new cheapest).
    pub registrar: Option<Box<str>>,
    /// The previous cheapest (`ranking.changed`).
    pub previous_registrar: Option<Box<str>>,
    /// When its swap was recorded, Unix ms.
    pub at_ms: i64,
    /// The event's JSON object, as delivered.
    pub json: Box<str>,
}

/// One recorded swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swap {
    /// Content hash of the snapshot swapped out.
    pub from: u128,
    /// Content hash of the snapshot swapped in.
    pub to: u128,
    /// When it was recorded, Unix ms.
    pub at_ms: i64,
    /// Id of its first event.
    pub first_id: u64,
    /// How many events it has.
    pub count: u32,
}

/// Which events a reader wants. Empty lists mean "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Set of [`Kind::bit`]s; 0 = every kind.
    pub kinds: u8,
    /// Canonical TLD names.
    pub tlds: Vec<String>,
    /// Registrar keys; a `ranking.changed` matches its new or its previous cheapest.
    pub registrars: Vec<String>,
}

impl Filter {
    /// Whether `e` passes.
    pub fn matches(&self, e: &Stored) -> bool {
        (self.kinds == 0 || self.kinds & e.kind.bit() != 0)
            && (self.tlds.is_empty() || self.tlds.iter().any(|t| **t == *e.tld))
            && (self.registrars.is_empty()
                || [&e.registrar, &e.previous_registrar]
                    .into_iter()
                    .flatten()
                    .any(|r| self.registrars.iter().any(|k| **k == **r)))
    }
}

/// A page of events read from the log.
#[derive(Debug, Default)]
pub struct Page {
    /// Matching events, ascending ids.
    pub events: Vec<Arc<Stored>>,
    /// Where the next read continues (`after`): the last id looked at. Never less than
    /// the `after` asked for.
    pub cursor: u64,
    /// Whether more events after `cursor` exist (the page stopped at its limit).
    pub more: bool,
}

/// The durable event log of one data directory.
pub struct EventLog {
    path: PathBuf,
    retention_ms: i64,
    clock: Arc<dyn Clock>,
    writer: Mutex<Writer>,
    mem: RwLock<Memory>,
    last_id: tokio::sync::watch::Sender<u64>,
    dropped_on_open: u64,
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLog")
            .field("path", &self.path)
            .field("last_id", &*self.last_id.borrow())
            .finish_non_exhaustive()
    }
}

struct Writer {
    file: File,
    /// Bytes known good: the next record is written here.
    len: u64,
    next_id: u64,
    /// (from, to) pairs recorded and not since superseded (see the module docs).
    seen: HashSet<(u128, u128)>,
    /// The file handle is not the file at the path (a compaction could not reopen it):
    /// appends are refused until the log is opened again.
    broken: bool,
    /// The shared sequence in Redis, when the log mirrors one.
    shared: Option<Shared>,
    /// The last swaps-stream entry of Redis looked at ("0-0": none yet).
    mirrored: String,
}

#[derive(Default)]
struct Memory {
    swaps: Vec<Swap>,
    events: Vec<Arc<Stored>>,
}

impl EventLog {
    /// Opens (or creates) `dir/events.log`: drops a torn tail, applies the retention.
    pub fn open(
        dir: &Path,
        retention_ms: i64,
        clock: Arc<dyn Clock>,
    ) -> Result<EventLog, LogError> {
        let path = dir.join(FILE_NAME);
        let io = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        files::create_dir(dir, Mode::Private).map_err(io)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if files::is_leftover_of(&e.file_name().to_string_lossy(), FILE_NAME) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        if !path.exists() {
            files::write_atomic_mode(&path, &header(1), Mode::Private).map_err(io)?;
        }
        let bytes = std::fs::read(&path).map_err(io)?;
        let scan = scan(&path, &bytes)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        let dropped = bytes.len() as u64 - scan.good_len;
        if dropped > 0 {
            file.set_len(scan.good_len).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let next_id = scan
            .mem
            .swaps
            .last()
            .map_or(scan.base_id, |s| s.first_id + u64::from(s.count))
            .max(scan.base_id);
        let mut seen = HashSet::new();
        for s in &scan.mem.swaps {
            remember(&mut seen, s.from, s.to);
        }
        let log = EventLog {
            path,
            retention_ms,
            clock,
            writer: Mutex::new(Writer {
                file,
                len: scan.good_len,
                next_id,
                seen,
                broken: false,
                shared: None,
                mirrored: "0-0".to_owned(),
            }),
            mem: RwLock::new(scan.mem),
            last_id: tokio::sync::watch::Sender::new(next_id - 1),
            dropped_on_open: dropped,
        };
        log.compact()?;
        Ok(log)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of a torn tail dropped when the log was opened (0 after a clean stop).
    pub fn dropped_on_open(&self) -> u64 {
        self.dropped_on_open
    }

    /// The id of the last event recorded (0 before any).
    pub fn last_id(&self) -> u64 {
        *self.last_id.borrow()
    }

    /// The id of the oldest event still kept (retention), if any.
    pub fn first_id(&self) -> Option<u64> {
        read(&self.mem).events.first().map(|e| e.id)
    }

    /// A receiver of the last event id, changed after every append: what streaming
    /// subscribers wait on (no polling).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.last_id.subscribe()
    }

    /// How many events are kept (within the retention).
    pub fn kept(&self) -> usize {
        read(&self.mem).events.len()
    }

    /// The content hash of the snapshot the last kept swap swapped in, if any.
    pub fn last_snapshot(&self) -> Option<u128> {
        read(&self.mem).swaps.last().map(|s| s.to)
    }

    /// The swaps kept, oldest first.
    pub fn swaps(&self) -> Vec<Swap> {
        read(&self.mem).swaps.clone()
    }

    /// Up to `limit` events with an id above `after` that pass `filter`.
    pub fn read(&self, after: u64, filter: &Filter, limit: usize) -> Page {
        let mem = read(&self.mem);
        let start = mem.events.partition_point(|e| e.id <= after);
        let mut page = Page {
            events: Vec::new(),
            cursor: after,
            more: false,
        };
        for e in &mem.events[start..] {
            if page.events.len() == limit {
                page.more = true;
                return page;
            }
            page.cursor = e.id;
            if filter.matches(e) {
                page.events.push(Arc::clone(e));
            }
        }
        page
    }

    /// Diffs `old` against `new` and records the events, unless the swap changes
    /// nothing (same content hash) or is a replay. Returns the ids recorded.
    pub fn record_swap(&self, old: &Snapshot, new: &Snapshot) -> Result<Range<u64>, LogError> {
        if self.is_shared() {
            let before = self.last_id() + 1;
            self.record_shared(old, new)?;
            return Ok(before..self.last_id() + 1);
        }
        let (from, to) = (old.header().content_hash, new.header().content_hash);
        if from == to || self.is_replay(from, to) {
            let next = self.last_id() + 1;
            return Ok(next..next);
        }
        let mut changes = Vec::new();
        diff(old.data(), new.data(), &mut changes);
        self.append(from, to, &changes)
    }

    /// Whether a swap `from → to` would be a replay (see the module docs).
    pub fn is_replay(&self, from: u128, to: u128) -> bool {
        lock(&self.writer).seen.contains(&(from, to))
    }

    /// Records one swap's changes as one synced record and publishes them to readers.
    /// A replay records nothing. Returns the ids given.
    pub fn append(
        &self,
        from: u128,
        to: u128,
        changes: &[Change<'_>],
    ) -> Result<Range<u64>, LogError> {
        let mut w = lock(&self.writer);
        if w.seen.contains(&(from, to)) {
            return Ok(w.next_id..w.next_id);
        }
        let swap = Swap {
            from,
            to,
            at_ms: self.clock.now_ms(),
            first_id: w.next_id,
            count: u32::try_from(changes.len()).map_err(|_| LogError::TooLarge(usize::MAX))?,
        };
        let (payload, stored) = render(&swap, changes);
        self.commit(&mut w, swap, payload, stored)?;
        let ids = swap.first_id..w.next_id;
        drop(w);
        self.compact_if_expired(swap.at_ms)?;
        Ok(ids)
    }

    /// Writes one swap's record (synced) at the end of the good bytes and publishes its
    /// events to readers; the writer lock is held.
    fn commit(
        &self,
        w: &mut Writer,
        swap: Swap,
        payload: Vec<u8>,
        stored: Vec<Arc<Stored>>,
    ) -> Result<(), LogError> {
        if w.broken {
            return Err(LogError::Io {
                path: self.path.clone(),
                source: std::io::Error::other(
                    "the log file was rewritten but could not be reopened; restart the server",
                ),
            });
        }
        let frame = frame(&payload)?;
        let io = |source| LogError::Io {
            path: self.path.clone(),
            source,
        };
        let written = w
            .file
            .write_all_at(&frame, w.len)
            .and_then(|()| w.file.sync_data());
        if let Err(e) = written {
            // Leave the file as it was; a partial record past `len` would otherwise be
            // overwritten by the next append anyway, or dropped as a torn tail.
            let _ = w.file.set_len(w.len);
            return Err(io(e));
        }
        w.len += frame.len() as u64;
        w.next_id = w.next_id.max(swap.first_id + u64::from(swap.count));
        remember(&mut w.seen, swap.from, swap.to);
        {
            let mut mem = write(&self.mem);
            mem.swaps.push(swap);
            mem.events.extend(stored);
        }
        self.last_id.send_replace(w.next_id - 1);
        Ok(())
    }

    /// Compacts when the oldest kept swap is past the retention at `now_ms`.
    fn compact_if_expired(&self, now_ms: i64) -> Result<(), LogError> {
        let expired = read(&self.mem)
            .swaps
            .first()
            .is_some_and(|s| s.at_ms < now_ms - self.retention_ms);
        if expired {
            self.compact()?;
        }
        Ok(())
    }

    /// Makes this log a mirror of the event sequence shared through Redis
    /// ([`super::shared`]): swaps are registered and published there before they are
    /// recorded here, with the ids Redis gives; the swaps other replicas registered are
    /// recorded here too (now, and by [`EventLog::start_mirror`] as they come).
    pub fn with_shared(self, mut shared: Shared) -> Result<EventLog, LogError> {
        {
            let mut w = lock(&self.writer);
            self.mirror_locked(&mut w, &mut shared)?;
            w.shared = Some(shared);
        }
        Ok(self)
    }

    /// Whether swaps are registered in Redis.
    pub fn is_shared(&self) -> bool {
        lock(&self.writer).shared.is_some()
    }

    /// Registers `old → new` in Redis, publishes its events there, and records every
    /// registered swap this log lacks, this one included, with the registered ids.
    fn record_shared(&self, old: &Snapshot, new: &Snapshot) -> Result<(), LogError> {
        let (from, to) = (old.header().content_hash, new.header().content_hash);
        if from == to {
            return Ok(());
        }
        let mut changes = Vec::new();
        diff(old.data(), new.data(), &mut changes);
        let count = u32::try_from(changes.len()).map_err(|_| LogError::TooLarge(usize::MAX))?;
        let mut w = lock(&self.writer);
        let mut shared = w.shared.take().expect("record_shared in shared mode");
        let result = (|| {
            let url = shared_url(&shared);
            let redis = |e: String| self.redis_error(&url, e);
            let (first_id, at_ms, _) = shared
                .register(from, to, count, self.clock.now_ms(), w.next_id - 1)
                .map_err(redis)?;
            let swap = Swap {
                from,
                to,
                at_ms,
                first_id,
                count,
            };
            let (_, stored) = render(&swap, &changes);
            let events: Vec<&[u8]> = stored.iter().map(|e| e.json.as_bytes()).collect();
            shared.publish(from, to, first_id, &events).map_err(redis)?;
            self.mirror_locked(&mut w, &mut shared)
        })();
        w.shared = Some(shared);
        drop(w);
        result?;
        self.compact_if_expired(self.clock.now_ms())
    }

    /// Records the registered swaps this log lacks, in registration order; the writer
    /// lock is held.
    fn mirror_locked(&self, w: &mut Writer, shared: &mut Shared) -> Result<(), LogError> {
        let url = shared_url(shared);
        let swaps = shared
            .swaps_after(&w.mirrored)
            .map_err(|e| self.redis_error(&url, e))?;
        for r in swaps {
            let known = r.first_id < w.next_id
                || read(&self.mem)
                    .swaps
                    .iter()
                    .rev()
                    .any(|s| s.first_id == r.first_id && s.from == r.from && s.to == r.to);
            if !known {
                let events = shared.events(&r).map_err(|e| self.redis_error(&url, e))?;
                let swap = Swap {
                    from: r.from,
                    to: r.to,
                    at_ms: r.at_ms,
                    first_id: r.first_id,
                    count: r.count,
                };
                let mut payload = Vec::new();
                write_swap_line(&swap, &mut payload);
                let mut stored = Vec::with_capacity(events.len());
                for (k, e) in events.iter().enumerate() {
                    let line = std::str::from_utf8(e)
                        .map_err(|_| self.redis_error(&url, "an event that is not UTF-8".into()))?;
                    let event = stored_of(line, swap.at_ms)
                        .filter(|s| s.id == swap.first_id + k as u64)
                        .ok_or_else(|| {
                            self.redis_error(
                                &url,
                                format!("event {} of a swap is not valid", k + 1),
                            )
                        })?;
                    stored.push(Arc::new(event));
                    payload.extend_from_slice(e);
                    payload.push(b'\n');
                }
                self.commit(w, swap, payload, stored)?;
            }
            w.mirrored = r.entry;
        }
        Ok(())
    }

    /// Records the swaps registered in Redis since the last look (the mirror thread's
    /// step; also usable alone).
    pub fn mirror(&self) -> Result<(), LogError> {
        let mut w = lock(&self.writer);
        let Some(mut shared) = w.shared.take() else {
            return Ok(());
        };
        let result = self.mirror_locked(&mut w, &mut shared);
        w.shared = Some(shared);
        result
    }

    /// Starts a thread that waits (`XREAD BLOCK`) for swaps other replicas register and
    /// records them; it ends when the log is dropped.
    pub fn start_mirror(self: &Arc<Self>, url: String) -> std::thread::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        std::thread::spawn(move || {
            let mut conn: Option<Shared> = None;
            loop {
                let after = match weak.upgrade() {
                    Some(log) => lock(&log.writer).mirrored.clone(),
                    None => return,
                };
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => match Shared::connect(&url) {
                        Ok(c) => conn.insert(c),
                        Err(_) => {
                            std::thread::sleep(Duration::from_secs(1));
                            continue;
                        }
                    },
                };
                match c.wait_swaps(&after) {
                    Ok(new) if new.is_empty() => {}
                    Ok(_) => {
                        let Some(log) = weak.upgrade() else { return };
                        if let Err(e) = log.mirror() {
                            eprintln!("tldsnap: event log: {e}; trying again");
                            std::thread::sleep(Duration::from_millis(200));
                        }
                    }
                    Err(_) => {
                        conn = None;
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }
            }
        })
    }

    fn redis_error(&self, url: &str, why: String) -> LogError {
        LogError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(format!("shared event sequence at {url}: {why}")),
        }
    }

    /// Removes the swaps recorded longer ago than the retention: the file is rewritten
    /// atomically without them. Returns how many were removed.
    pub fn compact(&self) -> Result<usize, LogError> {
        let mut w = lock(&self.writer);
        let cutoff = self.clock.now_ms().saturating_sub(self.retention_ms);
        let keep_from = read(&self.mem).swaps.partition_point(|s| s.at_ms < cutoff);
        if keep_from == 0 {
            return Ok(0);
        }
        let io = |source| LogError::Io {
            path: self.path.clone(),
            source,
        };
        // Only appends and compactions change the memory, and both hold the writer
        // lock: the new file is built and written under a read lock, so readers go on.
        let mut bytes = header(w.next_id).to_vec();
        let drop_events = {
            let mem = read(&self.mem);
            let first_kept = mem.swaps.get(keep_from).map_or(u64::MAX, |s| s.first_id);
            let drop_events = mem.events.partition_point(|e| e.id < first_kept);
            let mut events = mem.events[drop_events..].iter();
            for s in &mem.swaps[keep_from..] {
                let mut payload = Vec::new();
                write_swap_line(s, &mut payload);
                for e in events.by_ref().take(s.count as usize) {
                    payload.extend_from_slice(e.json.as_bytes());
                    payload.push(b'\n');
                }
                bytes.extend_from_slice(&frame(&payload)?);
            }
            drop_events
        };
        files::write_atomic_mode(&self.path, &bytes, Mode::Private).map_err(io)?;
        // The old inode is gone from the directory: write to the new file from now on.
        // Until that works, appends are refused (they would go to the unlinked file).
        w.broken = true;
        w.file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(io)?;
        w.broken = false;
        w.len = bytes.len() as u64;
        let mut mem = write(&self.mem);
        mem.swaps.drain(..keep_from);
        mem.events.drain(..drop_events);
        w.seen.clear();
        for s in &mem.swaps {
            remember(&mut w.seen, s.from, s.to);
        }
        drop(mem);
        // Whichever replica compacts removes the expired swaps' events from Redis too
        // (best effort: another replica's compaction, or the next, does it otherwise).
        if let Some(shared) = w.shared.as_mut() {
            let _ = shared.forget_older(cutoff);
        }
        Ok(keep_from)
    }
}

impl SwapObserver for EventLog {
    fn before_swap(&self, old: Option<&Snapshot>, new: &Snapshot) -> Result<(), String> {
        match old {
            // The first snapshot of a process is a start, not a change.
            None => Ok(()),
            Some(old) => self
                .record_swap(old, new)
                .map(|_| ())
                .map_err(|e| format!("events not recorded, swap refused: {e}")),
        }
    }
}

/// The record payload of a swap (its line, then one line per event) and the events as
/// readers get them.
fn render(swap: &Swap, changes: &[Change<'_>]) -> (Vec<u8>, Vec<Arc<Stored>>) {
    let mut stored = Vec::with_capacity(changes.len());
    let mut payload = Vec::with_capacity(128 + changes.len() * 320);
    write_swap_line(swap, &mut payload);
    for (k, c) in changes.iter().enumerate() {
        let start = payload.len();
        let env = Envelope {
            id: swap.first_id + k as u64,
            at_ms: swap.at_ms,
            from: swap.from,
            to: swap.to,
        };
        write_event(&env, c, &mut payload);
        let json = std::str::from_utf8(&payload[start..]).expect("rendered JSON is UTF-8");
        stored.push(Arc::new(Stored {
            id: env.id,
            kind: c.kind,
            tld: c.tld.into(),
            registrar: c.registrar.map(Into::into),
            previous_registrar: c.previous_registrar.map(Into::into),
            at_ms: swap.at_ms,
            json: json.into(),
        }));
        payload.push(b'\n');
    }
    (payload, stored)
}

/// An event line of a record (or of Redis) as readers get it; `None` when it is not an
/// event.
fn stored_of(line: &str, at_ms: i64) -> Option<Stored> {
    let e: EventLine = serde_json::from_str(line).ok()?;
    Some(Stored {
        id: e.id,
        kind: Kind::parse(&e.kind)?,
        tld: e.data.tld.into(),
        registrar: e.data.registrar.map(Into::into),
        previous_registrar: e.data.previous_registrar.map(Into::into),
        at_ms,
        json: line.into(),
    })
}

fn shared_url(shared: &Shared) -> String {
    shared.url().to_owned()
}

/// Records the pair `from → to`; forgets the pairs that start where this swap arrives
/// (after A→B, B→A, a later A→B is a new change, not a replay).
fn remember(seen: &mut HashSet<(u128, u128)>, from: u128, to: u128) {
    seen.retain(|p| p.0 != to);
    seen.insert((from, to));
}

fn header(base_id: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&base_id.to_le_bytes());
    h
}

fn frame(payload: &[u8]) -> Result<Vec<u8>, LogError> {
    let len = u32::try_from(payload.len()).map_err(|_| LogError::TooLarge(payload.len()))?;
    let mut out = Vec::with_capacity(FRAME_LEN + payload.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&XxHash3_64::oneshot_with_seed(u64::from(len), payload).to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

fn write_swap_line(s: &Swap, out: &mut Vec<u8>) {
    let mut n = itoa::Buffer::new();
    out.extend_from_slice(b"{\"from\":\"");
    write_hash(s.from, out);
    out.extend_from_slice(b"\",\"to\":\"");
    write_hash(s.to, out);
    out.extend_from_slice(b"\",\"at_ms\":");
    out.extend_from_slice(n.format(s.at_ms).as_bytes());
    out.extend_from_slice(b",\"first_id\":");
    out.extend_from_slice(n.format(s.first_id).as_bytes());
    out.extend_from_slice(b",\"count\":");
    out.extend_from_slice(n.format(s.count).as_bytes());
    out.extend_from_slice(b"}\n");
}

struct Scan {
    base_id: u64,
    good_len: u64,
    mem: Memory,
}

#[derive(Deserialize)]
struct SwapLine {
    from: String,
    to: String,
    at_ms: i64,
    first_id: u64,
    count: u32,
}

#[derive(Deserialize)]
struct EventLine {
    id: u64,
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Deserialize)]
struct EventData {
    tld: String,
    registrar: Option<String>,
    #[serde(default)]
    previous_registrar: Option<String>,
}

/// Reads the header and every whole, checksummed record; stops at the first torn one.
fn scan(path: &Path, bytes: &[u8]) -> Result<Scan, LogError> {
    let corrupt = |why: String| LogError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    if bytes.len() < HEADER_LEN || bytes[0..8] != MAGIC {
        return Err(corrupt("not a tldsnap event log (bad header)".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(corrupt(format!(
            "format version {version}, this build reads {VERSION}"
        )));
    }
    let base_id = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes")).max(1);
    let mut mem = Memory::default();
    let mut at = HEADER_LEN;
    let mut prev_end = 0u64;
    while let Some(payload) = record_at(bytes, at) {
        let bad = |why: &str| corrupt(format!("record at byte {at}: {why}"));
        let text = std::str::from_utf8(payload).map_err(|_| bad("not UTF-8"))?;
        let mut lines = text.split_terminator('\n');
        let head: SwapLine = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| bad("no swap line"))?;
        let swap = Swap {
            from: parse_hash(&head.from).ok_or_else(|| bad("bad from hash"))?,
            to: parse_hash(&head.to).ok_or_else(|| bad("bad to hash"))?,
            at_ms: head.at_ms,
            first_id: head.first_id,
            count: head.count,
        };
        if swap.first_id < prev_end.max(1) {
            return Err(bad("event ids go backwards"));
        }
        for k in 0..swap.count {
            let line = lines
                .next()
                .ok_or_else(|| bad("fewer events than counted"))?;
            let e = stored_of(line, swap.at_ms)
                .ok_or_else(|| bad("a line that is not an event (bad JSON or an unknown type)"))?;
            if e.id != swap.first_id + u64::from(k) {
                return Err(bad("event ids not consecutive"));
            }
            mem.events.push(Arc::new(e));
        }
        if lines.next().is_some() {
            return Err(bad("more events than counted"));
        }
        prev_end = swap.first_id + u64::from(swap.count);
        mem.swaps.push(swap);
        at += FRAME_LEN + payload.len();
    }
    Ok(Scan {
        base_id,
        good_len: at as u64,
        mem,
    })
}

/// The payload of the whole, checksummed record at `at`, or `None` (end or torn).
fn record_at(bytes: &[u8], at: usize) -> Option<&[u8]> {
    let head = bytes.get(at..at + FRAME_LEN)?;
    let len = u32::from_le_bytes(head[0..4].try_into().expect("4 bytes"));
    let check = u64::from_le_bytes(head[4..12].try_into().expect("8 bytes"));
    let payload = bytes.get(at + FRAME_LEN..(at + FRAME_LEN).checked_add(len as usize)?)?;
    (XxHash3_64::oneshot_with_seed(u64::from(len), payload) == check).then_some(payload)
}

fn parse_hash(s: &str) -> Option<u128> {
    (s.len() == 32)
        .then(|| u128::from_str_radix(s, 16).ok())
        .flatten()
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}
