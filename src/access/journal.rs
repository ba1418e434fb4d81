//! What a replica really spent, per key and month, in a memory-mapped file that outlives
//! the process: the record that lets a restart hand back the unspent leases of a run
//! killed with `kill -9` (`docs/METERING.md`, "A replica that crashes").
//!
//! With Redis, a replica's field in a key's hash holds what it *claimed*: the credits it
//! spent plus an unspent lease ([`super::remote`]). A replica that stops cleanly hands
//! its leases back; a killed one cannot, and from Redis alone nobody can tell its lease
//! from its spending. With `--data-dir` as well, every run keeps
//! `DATA_DIR/credits/FIELD.journal` (FIELD: the run's field in the hashes):
//!
//! ```text
//! offset  size  header (64 bytes, written once at start; native byte order: the file
//!                never leaves its machine)
//!      0     8  magic b"TLDSNAPJ"
//!      8     4  version (1)
//!     12     4  record size (528)
//!     16     4  length of the field id
//!     20     4  reserved, zero
//!     24     8  start of the run, Unix ms
//!     32     8  1 once the run stopped cleanly (leases handed back), else 0
//!     40    24  the field id (ASCII)
//!     64     …  records, 528 bytes each, in segments of 64 mapped one by one:
//!               word 0: credits spent (updated with an atomic add per credit)
//!               word 1: bit 63 in use, bits 32-47 id length, bits 0-31 month
//!               words 2-65: the key id (UTF-8, up to 512 bytes: 128 characters)
//! ```
//!
//! The records are a shared mapping of the file (`MAP_SHARED`, through `memmap2`): a
//! store into it goes to the page cache, which *is* the file, so it survives the end of
//! the process, `kill -9` included, without a system call on the request path. A key's
//! record is made before the run claims any credit for it in that month, so every claim
//! in Redis is covered by a record; a credit is added to it right after it is taken
//! from the lease, before the answer is written.
//!
//! The next run on the data directory (one process at a time: the data directory is
//! locked) reads the journals of earlier runs and sets each of their fields to exactly
//! what they spent — the absolute write that hands an idle lease back — before it
//! serves; while Redis is unreachable it retries once a second. Then it deletes them.
//! No live process writes a dead run's field, so the hand-back can be retried at any
//! moment without racing anyone.
//!
//! The file is the operator's to damage, never the server's to die of: the records live
//! in memory as well, a fault on a page of the mapping that a `truncate` cut off is
//! answered with a zeroed page (`crate::mapguard`), and the once-a-second flush writes
//! the journal anew from memory when it finds the file cut, removed, replaced or
//! rewritten ([`Journal::flush`]).
//!
//! Power loss is another matter: the disk holds what the kernel wrote back. The
//! background task flushes the mapping (`msync`) once a second, so a journal read after
//! a power cut is about a second old at most, and that run is under-charged by at most
//! its last second of spending, never charged twice.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::{ArcSwap, ArcSwapOption};

use super::AccessError;
use super::month::month_label;
use super::remote::Remote;
use crate::files;
use crate::lock;

/// The directory of the journals, inside the data directory.
pub const DIR: &str = "credits";
/// The journals' file name extension.
const EXT: &str = "journal";
const MAGIC: &[u8; 8] = b"TLDSNAPJ";
const VERSION: u32 = 1;
const HEADER: usize = 64;
const FIELD_MAX: usize = 24;
/// Longest key id in bytes (the keys file allows 128 characters).
const ID_MAX: usize = 512;
const RECORD_WORDS: usize = 2 + ID_MAX / 8;
const RECORD: usize = RECORD_WORDS * 8;
const SEGMENT_RECORDS: usize = 64;
const SEGMENT: usize = SEGMENT_RECORDS * RECORD;
const IN_USE: u64 = 1 << 63;
/// Months whose hash may still exist: hashes expire 100 days after their last write, so
/// a dead run's fields of older months are not written again (that would bring back a
/// hash holding one field).
const MONTHS_KEPT: u32 = 3;

/// A key's record for the current month, cached in its meter so that the request path
/// finds it without a lookup.
pub(crate) type Slot = ArcSwapOption<Record>;

/// One segment of records: this run's words in memory, and the same words in the file.
#[derive(Debug)]
struct Segment {
    /// Where the segment starts in the file.
    at: usize,
    /// The records as this run knows them: what [`Record::spent`] reads, and what a
    /// rebuilt journal is written from. Every store goes here first.
    mem: Box<[AtomicU64]>,
    /// The same words in the journal file (a shared mapping: a store into it survives
    /// `kill -9`). Replaced when the file is written anew ([`Journal::flush`]).
    file: ArcSwap<Mirror>,
}

/// A segment's words in the journal file: a shared mapping, guarded against the file
/// being cut under it (`crate::mapguard`).
#[derive(Debug)]
struct Mirror {
    /// Dropped before `map` is unmapped (fields drop in order).
    guard: crate::mapguard::Registered,
    map: memmap2::MmapRaw,
}

impl Mirror {
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `map` is a read-write shared mapping of SEGMENT bytes of a journal file
        // that this process made at least that long before mapping it. Its address is
        // 8-aligned (checked in `Journal::map`) and SEGMENT is a multiple of 8. The memory
        // is only ever reached through this slice of atomics (no `&[u8]` or `&mut` to it
        // exists), and it lives as long as `self`, which the returned borrow cannot
        // outlive. Should the file be cut under it, an access past the file's new end
        // reads and writes a zeroed private page instead of faulting (`guard`), which is
        // still memory of this mapping.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), SEGMENT / 8) }
    }
}

impl Segment {
    /// Stores `value` at word `w`, in memory and in the file.
    fn set(&self, w: usize, value: u64) {
        self.mem[w].store(value, Ordering::Release);
        self.file.load().words()[w].store(value, Ordering::Release);
    }
}

/// One key's record in one month: where its spent count lives.
#[derive(Debug)]
pub struct Record {
    segment: Arc<Segment>,
    first: usize,
    month: u32,
}

impl Record {
    fn spent_word(&self) -> &AtomicU64 {
        &self.segment.mem[self.first]
    }

    /// The month of this record.
    pub fn month(&self) -> u32 {
        self.month
    }

    /// Credits this run spent for the key in the month.
    pub fn spent(&self) -> u64 {
        self.spent_word().load(Ordering::Acquire)
    }

    /// Adds `n` in memory, then makes the file's word at least the new total: the
    /// file's count only grows, and a rebuilt file raised to the memory's counts cannot
    /// be pushed back by an add that was under way.
    fn add(&self, n: u64) {
        let total = self.spent_word().fetch_add(n, Ordering::AcqRel) + n;
        self.segment.file.load().words()[self.first].fetch_max(total, Ordering::Release);
    }
}

/// An earlier run's journal: what it spent, still to be written to its fields.
#[derive(Debug)]
pub struct Ended {
    /// The journal file.
    pub path: PathBuf,
    /// The run's field in the hashes.
    pub field: String,
    /// Whether the run stopped cleanly.
    pub clean: bool,
    /// When it started, Unix ms.
    pub started_ms: i64,
    /// (key id, month, credits spent), in record order.
    pub spent: Vec<(String, u32, u64)>,
    /// How many of `spent` are written to Redis already.
    done: usize,
}

struct State {
    segments: Vec<Arc<Segment>>,
    used: usize,
    index: ahash::AHashMap<(Arc<str>, u32), Arc<Record>>,
}

/// This run's journal, and the earlier runs' still to be handed back.
pub struct Journal {
    path: PathBuf,
    /// The header this run wrote (the clean-stop word aside).
    header: [u8; HEADER],
    /// The journal file; replaced when it is written anew.
    file: Mutex<File>,
    /// Times the file was found cut, replaced or changed and written anew.
    rebuilt: AtomicU64,
    state: Mutex<State>,
    grown: AtomicBool,
    /// Whether a record could not be made (logged once).
    failed: AtomicBool,
    ended: tokio::sync::Mutex<Vec<Ended>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> AccessError {
    let path = path.to_path_buf();
    move |source| AccessError::Io {
        path,
        action,
        source,
    }
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// Reads a journal file. `Ok(None)`: a file shorter than its header, which only a run
/// killed while creating it leaves (such a run claimed nothing yet).
pub fn read(path: &Path) -> Result<Option<Ended>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() < HEADER {
        return Ok(None);
    }
    if &bytes[..8] != MAGIC {
        return Err("not a tldsnap credit journal".into());
    }
    let u32_at =
        |at: usize| u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if u32_at(8) != VERSION || u32_at(12) as usize != RECORD {
        return Err(format!(
            "version {} with {}-byte records is not supported (expected {VERSION}, {RECORD})",
            u32_at(8),
            u32_at(12)
        ));
    }
    let field_len = u32_at(16) as usize;
    let field = bytes[40..40 + field_len.min(FIELD_MAX)].to_vec();
    let field = match String::from_utf8(field) {
        Ok(f)
            if field_len > 0
                && field_len <= FIELD_MAX
                && f.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            f
        }
        _ => return Err("the header's field id is damaged".into()),
    };
    let mut spent = Vec::new();
    for (n, rec) in bytes[HEADER..].chunks_exact(RECORD).enumerate() {
        let meta = word(rec, 8);
        if meta == 0 {
            continue;
        }
        let len = ((meta >> 32) & 0xffff) as usize;
        let id = rec.get(16..16 + len).map(|b| std::str::from_utf8(b));
        match id {
            Some(Ok(id))
                if meta & IN_USE != 0 && len > 0 && len <= ID_MAX && meta >> 48 == IN_USE >> 48 =>
            {
                spent.push((id.to_string(), meta as u32, word(rec, 0)));
            }
            _ => return Err(format!("record {n} is damaged")),
        }
    }
    Ok(Some(Ended {
        path: path.to_path_buf(),
        field,
        clean: word(&bytes, 32) == 1,
        started_ms: word(&bytes, 24) as i64,
        spent,
        done: 0,
    }))
}

impl Journal {
    /// Reads the journals that earlier runs left in `DATA_DIR/credits/` and starts this
    /// run's, `FIELD.journal`. The caller holds the data directory's lock. A journal that
    /// cannot be read stops the start with its path: it is billing data (move it aside to
    /// leave that run's fields as Redis holds them).
    pub fn open(data_dir: &Path, field: &str, now_ms: i64) -> Result<Journal, AccessError> {
        let dir = data_dir.join(DIR);
        files::create_dir(&dir, files::Mode::Private)
            .map_err(io_error(&dir, "create the credit journal directory"))?;
        let mut ended = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(io_error(&dir, "list"))?;
        for entry in entries {
            let path = entry.map_err(io_error(&dir, "list"))?.path();
            if path.extension().is_none_or(|e| e != EXT) {
                continue;
            }
            match read(&path) {
                Ok(Some(run)) => ended.push(run),
                Ok(None) => {
                    eprintln!(
                        "tldsnap: usage store: {} was cut short while being created (it claimed nothing); removed",
                        path.display()
                    );
                    files::remove_durably(&path).map_err(io_error(&path, "remove"))?;
                }
                Err(message) => {
                    return Err(AccessError::UsageFile {
                        path,
                        message: format!(
                            "{message}; move it aside to leave that run's credits as Redis holds them"
                        ),
                    });
                }
            }
        }
        ended.sort_by_key(|run| run.started_ms);

        if field.is_empty()
            || field.len() > FIELD_MAX
            || !field.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(AccessError::UsageFile {
                path: dir,
                message: format!("field id {field:?} cannot name a journal"),
            });
        }
        let path = dir.join(format!("{field}.{EXT}"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_error(&path, "create the credit journal"))?;
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_ne_bytes());
        header[12..16].copy_from_slice(&(RECORD as u32).to_ne_bytes());
        header[16..20].copy_from_slice(&(field.len() as u32).to_ne_bytes());
        header[24..32].copy_from_slice(&now_ms.to_ne_bytes());
        header[40..40 + field.len()].copy_from_slice(field.as_bytes());
        file.write_all_at(&header, 0)
            .map_err(io_error(&path, "write the credit journal"))?;
        let journal = Journal {
            path,
            header,
            file: Mutex::new(file),
            rebuilt: AtomicU64::new(0),
            state: Mutex::new(State {
                segments: Vec::new(),
                used: 0,
                index: ahash::AHashMap::new(),
            }),
            grown: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            ended: tokio::sync::Mutex::new(ended),
        };
        // The first segment now, so that an unusable directory stops the start.
        journal.grow(&mut lock(&journal.state))?;
        journal
            .flush()
            .map_err(io_error(&journal.path, "flush the credit journal"))?;
        Ok(journal)
    }

    /// This run's journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn grow(&self, state: &mut State) -> Result<(), AccessError> {
        let at = HEADER + state.segments.len() * SEGMENT;
        let file = lock(&self.file);
        file.set_len((at + SEGMENT) as u64)
            .map_err(io_error(&self.path, "grow the credit journal"))?;
        let mirror = self.map(&file, at)?;
        drop(file);
        state.segments.push(Arc::new(Segment {
            at,
            mem: (0..SEGMENT / 8).map(|_| AtomicU64::new(0)).collect(),
            file: ArcSwap::from_pointee(mirror),
        }));
        self.grown.store(true, Ordering::Release);
        Ok(())
    }

    /// Maps the segment at `at` of `file`, guarded.
    fn map(&self, file: &File, at: usize) -> Result<Mirror, AccessError> {
        let map = memmap2::MmapOptions::new()
            .offset(at as u64)
            .len(SEGMENT)
            .map_raw(file)
            .map_err(io_error(&self.path, "map the credit journal"))?;
        if !(map.as_ptr() as usize).is_multiple_of(8) {
            return Err(AccessError::UsageFile {
                path: self.path.clone(),
                message: "the mapping is not 8-byte aligned".into(),
            });
        }
        Ok(Mirror {
            guard: crate::mapguard::register(map.as_ptr(), SEGMENT),
            map,
        })
    }

    /// The record of key `id` in `month`, made if this run has none yet.
    pub fn record(&self, id: &Arc<str>, month: u32) -> Result<Arc<Record>, AccessError> {
        let mut state = lock(&self.state);
        if let Some(r) = state.index.get(&(id.clone(), month)) {
            return Ok(r.clone());
        }
        let bytes = id.as_bytes();
        if bytes.is_empty() || bytes.len() > ID_MAX {
            return Err(AccessError::UsageFile {
                path: self.path.clone(),
                message: format!("key id {id:?} does not fit a record"),
            });
        }
        if state.used == state.segments.len() * SEGMENT_RECORDS {
            self.grow(&mut state)?;
        }
        let n = state.used;
        let segment = state.segments[n / SEGMENT_RECORDS].clone();
        let first = (n % SEGMENT_RECORDS) * RECORD_WORDS;
        for (w, chunk) in (first + 2..).zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            segment.set(w, u64::from_ne_bytes(b));
        }
        // The record counts once its header word is in place, after its id.
        segment.set(
            first + 1,
            IN_USE | (bytes.len() as u64) << 32 | u64::from(month),
        );
        state.used += 1;
        let r = Arc::new(Record {
            segment,
            first,
            month,
        });
        state.index.insert((id.clone(), month), r.clone());
        Ok(r)
    }

    /// Makes sure key `id` has a record for `month` and caches it in `slot`: called
    /// before a credit is claimed. A journal that cannot grow (disk full) is logged (the
    /// first time) and the request goes on: the key's claims this month are then not
    /// covered, so a crash leaves its lease counted as used, as without a journal.
    pub(crate) fn prepare(&self, slot: &Slot, id: &Arc<str>, month: u32) {
        if slot.load().as_ref().is_some_and(|r| r.month == month) {
            return;
        }
        match self.record(id, month) {
            Ok(r) => slot.store(Some(r)),
            Err(e) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "tldsnap: usage store: {e}; a crash would leave the leases of keys without a record counted as used (further failures are not logged)"
                    );
                }
            }
        }
    }

    /// Adds `n` credits spent to the record in `slot`, if it is `month`'s.
    pub(crate) fn add(slot: &Slot, month: u32, n: u64) {
        if let Some(r) = slot.load().as_ref()
            && r.month == month
        {
            r.add(n);
        }
    }

    /// Credits this run spent for key `id` in `month`, by its journal.
    pub fn spent(&self, id: &str, month: u32) -> u64 {
        lock(&self.state)
            .index
            .get(&(Arc::from(id), month))
            .map_or(0, |r| r.spent())
    }

    /// Writes the mapped records to the disk (`msync`), and the file's size after it
    /// grew. Blocking: the background task calls it once a second off the runtime.
    ///
    /// First it checks that the file is still this run's: the same file at the path, as
    /// long as its segments, with this run's header and records (each spent count at
    /// least what it is in memory: a smaller one is raised). A file cut, removed,
    /// replaced or rewritten under the server (a fault on a cut page is answered by a
    /// zeroed page: `crate::mapguard`) is written anew from the records in memory,
    /// published by rename, and mapped in place of the old; that is logged and counted
    /// ([`Journal::rebuilt`]).
    pub fn flush(&self) -> std::io::Result<()> {
        let state = lock(&self.state);
        // Every guard's flag is taken (`|`, not `||`).
        let faulted = state
            .segments
            .iter()
            .fold(false, |any, s| s.file.load().guard.take_faulted() | any);
        if let Some(why) = faulted
            .then(|| "a page of it was cut off under the server".to_owned())
            .or_else(|| self.damage(&state))
        {
            self.rebuild(&state)?;
            self.rebuilt.fetch_add(1, Ordering::Relaxed);
            eprintln!(
                "tldsnap: usage store: the credit journal {} was changed under the server ({why}); written anew from the records in memory",
                self.path.display()
            );
        }
        for s in &state.segments {
            s.file.load().map.flush()?;
        }
        if self.grown.swap(false, Ordering::AcqRel) {
            lock(&self.file).sync_all()?;
        }
        Ok(())
    }

    /// Times the journal file was found changed under the server and written anew.
    pub fn rebuilt(&self) -> u64 {
        self.rebuilt.load(Ordering::Relaxed)
    }

    /// What is wrong with the file, if anything; raises a spent count the file holds
    /// below memory's (an add under way, or a file written back with older counts).
    fn damage(&self, state: &State) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let file = lock(&self.file);
        let ours = match file.metadata() {
            Ok(m) => m,
            Err(e) => return Some(format!("cannot stat it: {e}")),
        };
        match std::fs::metadata(&self.path) {
            Ok(at) if (at.dev(), at.ino()) == (ours.dev(), ours.ino()) => {}
            Ok(_) => return Some("another file was put at its path".into()),
            Err(_) => return Some("it was removed".into()),
        }
        let len = (HEADER + state.segments.len() * SEGMENT) as u64;
        if ours.len() < len {
            return Some(format!("cut to {} of {len} bytes", ours.len()));
        }
        let mut header = [0u8; HEADER];
        // The clean-stop word (32..40) aside, which only the last write of a run sets.
        if file.read_exact_at(&mut header, 0).is_err()
            || header[..32] != self.header[..32]
            || header[40..] != self.header[40..]
        {
            return Some("its header was overwritten".into());
        }
        for s in &state.segments {
            let words = s.file.load();
            let words = words.words();
            for (w, mem) in s.mem.iter().enumerate() {
                let mem = mem.load(Ordering::Acquire);
                if w % RECORD_WORDS == 0 {
                    if words[w].fetch_max(mem, Ordering::AcqRel) > mem {
                        return Some("a count was overwritten".into());
                    }
                } else if words[w].load(Ordering::Acquire) != mem {
                    return Some("a record was overwritten".into());
                }
            }
        }
        None
    }

    /// Writes the journal anew from memory (a new file renamed over the path), maps its
    /// segments in place of the old ones and raises each count to memory's (adds under
    /// way went to the old file).
    fn rebuild(&self, state: &State) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(HEADER + state.segments.len() * SEGMENT);
        bytes.extend_from_slice(&self.header);
        for s in &state.segments {
            for w in s.mem.iter() {
                bytes.extend_from_slice(&w.load(Ordering::Acquire).to_ne_bytes());
            }
        }
        files::write_atomic_mode(&self.path, &bytes, files::Mode::Private)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)?;
        let as_io = |e: AccessError| std::io::Error::other(e.to_string());
        for s in &state.segments {
            s.file
                .store(Arc::new(self.map(&file, s.at).map_err(as_io)?));
            let words = s.file.load();
            for (w, mem) in s.mem.iter().enumerate().step_by(RECORD_WORDS) {
                words.words()[w].fetch_max(mem.load(Ordering::Acquire), Ordering::AcqRel);
            }
        }
        *lock(&self.file) = file;
        Ok(())
    }

    /// Marks the run as stopped cleanly (after its leases were handed back).
    pub fn mark_clean(&self) -> std::io::Result<()> {
        self.flush()?;
        let file = lock(&self.file);
        file.write_all_at(&1u64.to_ne_bytes(), 32)?;
        file.sync_all()
    }

    /// Earlier runs whose fields are not all written back yet.
    pub async fn pending(&self) -> usize {
        self.ended.lock().await.len()
    }

    /// Sets every field of the earlier runs to what they spent, logging each run handed
    /// back, and deletes its journal. Stops at the first failure (Redis unreachable):
    /// the next call goes on from there. Returns whether nothing is left to do.
    pub(crate) async fn hand_back(&self, remote: &Remote, now_ms: i64) -> bool {
        let month_now = super::month::month_of(now_ms);
        let mut ended = self.ended.lock().await;
        while let Some(run) = ended.first_mut() {
            while let Some((id, month, spent)) = run.spent.get(run.done) {
                if month + MONTHS_KEPT >= month_now
                    && remote
                        .set_field(&run.field, id, *month, *spent)
                        .await
                        .is_err()
                {
                    return false;
                }
                run.done += 1;
            }
            let credits: u64 = run.spent.iter().map(|(_, _, s)| s).sum();
            let months: std::collections::BTreeSet<String> =
                run.spent.iter().map(|(_, m, _)| month_label(*m)).collect();
            eprintln!(
                "tldsnap: usage store: the run whose credits were field {} (started {}) {}: \
                 its field of {} key-month(s) ({}) now holds what it spent, {credits} credit(s)",
                run.field,
                crate::time::iso_millis(run.started_ms),
                if run.clean {
                    "stopped cleanly"
                } else {
                    "ended without a clean shutdown; its unspent leases are handed back"
                },
                run.spent.len(),
                months.into_iter().collect::<Vec<_>>().join(", "),
            );
            if let Err(e) = files::remove_durably(&run.path) {
                eprintln!(
                    "tldsnap: usage store: cannot remove {}: {e}",
                    run.path.display()
                );
            }
            ended.remove(0);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> crate::files::TestDir {
        crate::files::TestDir::new(&format!("journal-{tag}"))
    }

    #[test]
    fn records_survive_in_the_file_across_segments_and_read_back_exactly() {
        let dir = temp_dir("records");
        let j = Journal::open(&dir, "0123456789abcdef", 1_700_000_000_000).unwrap();
        let long: String = "é".repeat(128); // 256 bytes: the longest ids are 512
        let mut ids: Vec<Arc<str>> = (0..150)
            .map(|i| Arc::from(format!("key_{i:012}")))
            .collect();
        ids.push(Arc::from(long.as_str()));
        for (i, id) in ids.iter().enumerate() {
            let slot = Slot::default(); // one per key, as in its meter
            j.prepare(&slot, id, 24_310);
            Journal::add(&slot, 24_310, i as u64 + 1);
            Journal::add(&slot, 24_311, 1000); // another month: not this record's
        }
        // A second month for the first key, and a record asked for twice is one record.
        let r = j.record(&ids[0], 24_311).unwrap();
        r.add(5);
        assert!(Arc::ptr_eq(&r, &j.record(&ids[0], 24_311).unwrap()));
        assert_eq!(j.spent(&ids[3], 24_310), 4);
        assert_eq!(
            lock(&j.state).segments.len(),
            3,
            "152 records: three segments of 64"
        );

        // Read as the next run would, without a flush or a clean shutdown: the mapping is
        // the file.
        let run = read(j.path()).unwrap().unwrap();
        assert_eq!((run.field.as_str(), run.clean), ("0123456789abcdef", false));
        assert_eq!(run.started_ms, 1_700_000_000_000);
        assert_eq!(run.spent.len(), 152);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(run.spent[i], (id.to_string(), 24_310, i as u64 + 1));
        }
        assert_eq!(run.spent[151], (ids[0].to_string(), 24_311, 5));
        j.mark_clean().unwrap();
        assert!(read(j.path()).unwrap().unwrap().clean);

        // The next run finds it, and starts its own.
        let next = Journal::open(&dir, "fedcba9876543210", 1_700_000_001_000).unwrap();
        let pending = next.ended.try_lock().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].spent.len(), 152);
        drop(pending);
    }

    /// The file cut under the server (its adds would fault), removed, written back with
    /// older counts, or overwritten: the adds go on, and the next flush leaves a journal
    /// at the path that reads back exactly what was spent.
    #[test]
    fn a_journal_changed_under_the_server_is_written_anew_from_memory() {
        let dir = temp_dir("rebuilt");
        let j = Journal::open(&dir, "abcd", 1_700_000_000_000).unwrap();
        let ids: Vec<Arc<str>> = (0..100).map(|i| Arc::from(format!("key_{i}"))).collect();
        let slots: Vec<Slot> = ids.iter().map(|_| Slot::default()).collect();
        let mut spent: Vec<u64> = vec![0; ids.len()];
        let add_all = |spent: &mut Vec<u64>| {
            for (i, (id, slot)) in ids.iter().zip(&slots).enumerate() {
                j.prepare(slot, id, 24_310);
                Journal::add(slot, 24_310, i as u64 + 1);
                spent[i] += i as u64 + 1;
            }
        };
        let reads_back = |spent: &[u64]| {
            let run = read(j.path()).unwrap().unwrap();
            let got: Vec<u64> = run.spent.iter().map(|(_, _, s)| *s).collect();
            assert_eq!(got, spent);
            assert_eq!(run.field, "abcd");
        };
        add_all(&mut spent);
        j.flush().unwrap();
        reads_back(&spent);
        assert_eq!(j.rebuilt(), 0);

        // Cut to its header: every add touches a page past the end.
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(j.path())
            .unwrap();
        cut.set_len(HEADER as u64).unwrap();
        add_all(&mut spent);
        j.flush().unwrap();
        assert_eq!(j.rebuilt(), 1);
        reads_back(&spent);

        // Removed.
        std::fs::remove_file(j.path()).unwrap();
        add_all(&mut spent);
        j.flush().unwrap();
        assert_eq!(j.rebuilt(), 2);
        reads_back(&spent);

        // Written back in place with an older copy: the counts are raised again.
        let older = std::fs::read(j.path()).unwrap();
        add_all(&mut spent);
        std::fs::write(j.path(), &older).unwrap();
        j.flush().unwrap();
        reads_back(&spent);

        // Overwritten with other bytes of the same length.
        std::fs::write(j.path(), vec![0x5a; older.len()]).unwrap();
        j.flush().unwrap();
        assert_eq!(j.rebuilt(), 3);
        reads_back(&spent);
        add_all(&mut spent);
        reads_back(&spent);
        j.mark_clean().unwrap();
        assert!(read(j.path()).unwrap().unwrap().clean);
    }

    #[test]
    fn cut_short_journals_are_removed_and_damaged_ones_stop_the_start() {
        let dir = temp_dir("damaged");
        let jdir = dir.join(DIR);
        std::fs::create_dir_all(&jdir).unwrap();
        std::fs::write(jdir.join("aaaa.journal"), b"TLDSNAPJ").unwrap();
        let j = Journal::open(&dir, "bbbb", 0).unwrap();
        assert!(
            !jdir.join("aaaa.journal").exists(),
            "a header cut short is removed"
        );
        let slot = Slot::default();
        j.prepare(&slot, &Arc::from("k"), 1);
        Journal::add(&slot, 1, 1);
        drop(j);

        // A record whose header word is damaged.
        let path = jdir.join("bbbb.journal");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER + 8 + 6] = 0x12;
        std::fs::write(&path, &bytes).unwrap();
        let err = Journal::open(&dir, "cccc", 0).unwrap_err().to_string();
        assert!(
            err.contains("record 0 is damaged") && err.contains("move it aside"),
            "{err}"
        );
        std::fs::write(
            &path,
            b"something else entirely, longer than a header......................",
        )
        .unwrap();
        let err = Journal::open(&dir, "dddd", 0).unwrap_err().to_string();
        assert!(err.contains("not a tldsnap credit journal"), "{err}");
    }
}
