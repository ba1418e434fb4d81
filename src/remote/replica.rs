//! A replica following the pointer: download, verify, swap, keep a cached copy.
//!
//! ```text
//!   poll ──GET current (If-None-Match: last ETag)──▶ 304: nothing to do
//!        ──200, hash = served──▶ nothing to do (remember the ETag)
//!        ──200, new hash──▶ download to DATA_DIR/.snapshot.snap.tmp-… (fsync)
//!                          ──Store::verify_async (header, hash, bytecheck, invariants)
//!                          ──hash = pointer's?──Store::install (the swap a local reload does)
//!                          ──rename to DATA_DIR/snapshot.snap, pointer to snapshot.pointer.json
//! ```
//!
//! Anything that fails leaves the served snapshot and the cached copy as they were
//! (the temporary file is removed), is counted ([`Status`], and as a refused reload in
//! the store when the download arrived but did not verify), and is tried again at the
//! next poll: the ETag is only remembered once the pointer's snapshot is served.
//!
//! At start, [`Replica::open_cache`] verifies the copy an earlier run left in the data
//! directory. The server serves it at once when there is one and says so ([`SyncState`]
//! `cached`) until the store has answered; without one it is not ready until the first
//! download verified.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Pointer, PointerRead, Remote, RemoteError};
use crate::files::{Mode, Pending};
use crate::snapshot::{OpenError, Snapshot};
use crate::store::{Loaded, ReloadError, Store};

/// The cached copy of the served snapshot, in the data directory.
pub const CACHE_FILE: &str = "snapshot.snap";
/// The pointer the cached copy came from, beside it.
pub const CACHE_POINTER_FILE: &str = "snapshot.pointer.json";
/// The default time between two polls of the pointer.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(10);

/// How a replica stands with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncState {
    /// Nothing served yet: no cached copy, and no download verified so far.
    Waiting,
    /// Serving the copy cached in the data directory; the store has not answered a
    /// poll since the server started.
    Cached,
    /// The last poll succeeded: the served snapshot is the one the pointer names.
    Synced,
    /// The last poll failed (store unreachable, or the object it names refused): the
    /// last good snapshot keeps serving.
    Stale,
}

impl SyncState {
    /// Every state, in the order `/metrics` lists them.
    pub const ALL: [SyncState; 4] = [
        SyncState::Waiting,
        SyncState::Cached,
        SyncState::Synced,
        SyncState::Stale,
    ];

    /// The name `/readyz` and `/metrics` use.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncState::Waiting => "waiting",
            SyncState::Cached => "cached",
            SyncState::Synced => "synced",
            SyncState::Stale => "stale",
        }
    }
}

/// What a replica reports to `/readyz` and `/metrics`. Shared; updated by the poller.
#[derive(Debug)]
pub struct Status {
    url: String,
    polls_ok: AtomicU64,
    polls_failed: AtomicU64,
    /// Unix ms of the last successful poll; 0 before any.
    last_success_ms: AtomicI64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Serving the cached copy, and no poll has succeeded since start.
    cached: bool,
    /// The last poll failed.
    failing: bool,
    last_error: Option<String>,
    /// The pointer last read from the store.
    seen: Option<Pointer>,
    /// The pointer of the snapshot served (when known).
    served: Option<Pointer>,
}

/// A copy of [`Status`] at one moment.
#[derive(Debug, Clone)]
pub struct StatusView {
    /// The prefix followed, `s3://BUCKET/PREFIX/`.
    pub url: String,
    /// How the replica stands.
    pub state: SyncState,
    /// Polls that succeeded (304, unchanged, or a new snapshot swapped in).
    pub polls_ok: u64,
    /// Polls that failed.
    pub polls_failed: u64,
    /// Unix ms of the last successful poll.
    pub last_success_ms: Option<i64>,
    /// Why the last poll failed, while polls fail.
    pub last_error: Option<String>,
    /// The hash the pointer named at the last read.
    pub pointer_hash: Option<String>,
    /// When the served snapshot was published (from its pointer).
    pub served_published_ms: Option<i64>,
}

impl Status {
    /// The status of a replica following `url`, before anything happened.
    pub fn new(url: String) -> Status {
        Status {
            url,
            polls_ok: AtomicU64::new(0),
            polls_failed: AtomicU64::new(0),
            last_success_ms: AtomicI64::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The server serves the cached copy, which came from `pointer` when known.
    pub fn serving_cached(&self, pointer: Option<Pointer>) {
        let mut inner = self.inner();
        inner.cached = true;
        inner.served = pointer;
    }

    fn succeeded(&self, now_ms: i64) {
        self.polls_ok.fetch_add(1, Relaxed);
        self.last_success_ms.store(now_ms, Relaxed);
        let mut inner = self.inner();
        inner.cached = false;
        inner.failing = false;
        inner.last_error = None;
    }

    fn failed(&self, error: String) {
        self.polls_failed.fetch_add(1, Relaxed);
        let mut inner = self.inner();
        inner.failing = true;
        inner.last_error = Some(error);
    }

    fn saw(&self, pointer: &Pointer) {
        self.inner().seen = Some(pointer.clone());
    }

    fn serving(&self, pointer: &Pointer) {
        self.inner().served = Some(pointer.clone());
    }

    /// The status now; `loaded`: whether the store serves a snapshot.
    pub fn view(&self, loaded: bool) -> StatusView {
        let inner = self.inner();
        let state = if !loaded {
            SyncState::Waiting
        } else if inner.cached {
            SyncState::Cached
        } else if inner.failing {
            SyncState::Stale
        } else {
            SyncState::Synced
        };
        let last = self.last_success_ms.load(Relaxed);
        StatusView {
            url: self.url.clone(),
            state,
            polls_ok: self.polls_ok.load(Relaxed),
            polls_failed: self.polls_failed.load(Relaxed),
            last_success_ms: (last != 0).then_some(last),
            last_error: inner.last_error.clone(),
            pointer_hash: inner.seen.as_ref().map(|p| p.hash.clone()),
            served_published_ms: inner.served.as_ref().map(|p| p.published_at_ms),
        }
    }
}

/// What one poll did.
#[derive(Debug)]
pub enum Polled {
    /// The pointer has not changed since the last poll (a 304).
    NotModified,
    /// The pointer names the snapshot already served.
    Unchanged,
    /// A new snapshot was downloaded, verified and swapped in.
    Swapped(Arc<Loaded>),
}

/// A copy of the snapshot an earlier run cached in the data directory.
#[derive(Debug)]
pub struct Cached {
    /// The snapshot, verified.
    pub snapshot: Snapshot,
    /// The pointer it came from, when its record is there and names the same hash.
    pub pointer: Option<Pointer>,
}

/// Follows the pointer under one prefix for one store.
#[derive(Debug)]
pub struct Replica {
    remote: Remote,
    store: Arc<Store>,
    dir: PathBuf,
    status: Arc<Status>,
    /// The ETag of the pointer whose snapshot is served; held for a whole poll, which
    /// serialises polls (the poller's and SIGHUP's).
    etag: tokio::sync::Mutex<Option<String>>,
}

impl Replica {
    /// Verifies the cached copy in `dir`: `Ok(None)` when there is none, an error when
    /// it is there but does not verify (the caller logs it and starts without it).
    /// Also removes temporary files a crash mid-download left behind.
    pub fn open_cache(dir: &Path) -> Result<Option<Cached>, OpenError> {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if crate::files::is_leftover_of(&name, CACHE_FILE)
                    || crate::files::is_leftover_of(&name, CACHE_POINTER_FILE)
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let path = dir.join(CACHE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let snapshot = Snapshot::open(&path)?;
        let pointer = std::fs::read(dir.join(CACHE_POINTER_FILE))
            .ok()
            .and_then(|bytes| Pointer::parse(&bytes).ok())
            .filter(|p| p.hash == snapshot.header().hash_hex());
        Ok(Some(Cached { snapshot, pointer }))
    }

    /// A replica of `remote` into `store`, caching in `dir` (which must exist), reporting
    /// to `status`.
    pub fn new(remote: Remote, store: Arc<Store>, dir: PathBuf, status: Arc<Status>) -> Replica {
        Replica {
            remote,
            store,
            dir,
            status,
            etag: tokio::sync::Mutex::new(None),
        }
    }

    /// The status this replica reports to.
    pub fn status(&self) -> &Arc<Status> {
        &self.status
    }

    /// The object storage it follows.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Reads the pointer and, when it names another snapshot than the one served,
    /// downloads, verifies and swaps it in (see the module docs). Counted in the status.
    pub async fn poll(&self) -> Result<Polled, RemoteError> {
        let mut etag = self.etag.lock().await;
        let outcome = self.poll_locked(&mut etag).await;
        match &outcome {
            Ok(_) => self.status.succeeded(crate::time::now_ms()),
            Err(e) => self.status.failed(e.to_string()),
        }
        outcome
    }

    async fn poll_locked(&self, etag: &mut Option<String>) -> Result<Polled, RemoteError> {
        let (pointer, new_etag) = match self.remote.read_pointer(etag.as_deref()).await? {
            PointerRead::NotModified => return Ok(Polled::NotModified),
            PointerRead::Current { pointer, etag } => (pointer, etag),
        };
        self.status.saw(&pointer);
        let served = self.store.load();
        if served.is_some_and(|l| l.snapshot.header().hash_hex() == pointer.hash) {
            self.status.serving(&pointer);
            *etag = new_etag;
            return Ok(Polled::Unchanged);
        }
        let loaded = self.fetch(&pointer).await?;
        self.status.serving(&pointer);
        *etag = new_etag;
        Ok(Polled::Swapped(loaded))
    }

    async fn fetch(&self, pointer: &Pointer) -> Result<Arc<Loaded>, RemoteError> {
        let cache = self.dir.join(CACHE_FILE);
        let io = |e: std::io::Error| RemoteError::Io(format!("{}: {e}", self.dir.display()));
        let pending = {
            let cache = cache.clone();
            blocking(move || Pending::create(&cache, Mode::Shared))
                .await
                .map_err(io)?
        };
        let pending = self.remote.download(pointer, pending).await?;
        let url = self.remote.location().url_of(&pointer.key);
        let opened = Store::verify_async(pending.temp_path())
            .await
            .and_then(|snapshot| {
                let got = snapshot.header().hash_hex();
                if got == pointer.hash {
                    Ok(snapshot)
                } else {
                    Err(ReloadError::Refused(format!(
                        "{url} has content hash {got}, the pointer says {}",
                        pointer.hash
                    )))
                }
            })
            .map_err(|e| match e {
                // Name the object, not the temporary file it was downloaded to.
                ReloadError::Open { source, .. } => {
                    ReloadError::Refused(format!("{url}: {source}"))
                }
                other => other,
            });
        // The same swap as a local reload: the observer, the reload counters; a
        // refusal keeps the old snapshot and drops (removes) the download.
        let loaded = self
            .store
            .install(opened)
            .await
            .map_err(|e| RemoteError::Refused(e.to_string()))?;
        // Only a snapshot that is served becomes the cached copy.
        let record = self.dir.join(CACHE_POINTER_FILE);
        let json = pointer.to_json();
        blocking(move || {
            pending.publish()?;
            crate::files::write_atomic(&record, &json)
        })
        .await
        .map_err(io)?;
        Ok(loaded)
    }

    /// Polls now and then every `every` (±20%, so that replicas started together do not
    /// poll together), reporting each outcome, until `stop` resolves. Without `watch`
    /// it stops after the first successful poll that left a snapshot served (it retries
    /// until then: a replica started while the store is down becomes ready when it is
    /// back).
    pub async fn run<F>(
        self: Arc<Self>,
        every: Duration,
        watch: bool,
        stop: impl std::future::Future<Output = ()>,
        report: F,
    ) where
        F: Fn(&Result<Polled, RemoteError>) + Send + Sync + 'static,
    {
        tokio::pin!(stop);
        loop {
            let outcome = tokio::select! {
                _ = &mut stop => return,
                outcome = self.poll() => outcome,
            };
            report(&outcome);
            if !watch && outcome.is_ok() && self.store.is_ready() {
                return;
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep(jittered(every)) => {}
            }
        }
    }
}

/// `every` times a random factor in [0.8, 1.2).
pub fn jittered(every: Duration) -> Duration {
    let mut r = [0u8; 4];
    let unit = match getrandom::fill(&mut r) {
        Ok(()) => f64::from(u32::from_le_bytes(r)) / (f64::from(u32::MAX) + 1.0),
        Err(_) => 0.5,
    };
    every.mul_f64(0.8 + 0.4 * unit)
}

/// Runs blocking file work off the async workers ([`crate::blocking::run`]).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    crate::blocking::run(f).await.unwrap_or_else(|panic| {
        Err(std::io::Error::other(format!(
            "the file work panicked: {}",
            crate::blocking::panic_message(&*panic)
        )))
    })
}
