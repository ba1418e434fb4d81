//! The store: the snapshot being served, swapped atomically while requests run.
//!
//! A [`Store`] holds the current [`Snapshot`] in an [`ArcSwapOption`]. A request calls
//! [`Store::load`] once and keeps the `Arc` it gets until its answer is written, so it
//! sees one snapshot from start to end, and an old snapshot lives (in memory) exactly as
//! long as the last request that started on it. Loading is wait-free for readers: no
//! lock is shared by requests.
//!
//! A reload ([`Store::reload`], on SIGHUP or when `--watch` sees the file replaced)
//! opens and validates the new file *aside*; only a snapshot that opened cleanly is
//! swapped in. A file that fails (truncated, corrupted, wrong version, unreadable) is
//! refused, counted, and the old snapshot keeps serving.
//!
//! ```no_run
//! use std::path::PathBuf;
//! use tldsnap::store::Store;
//!
//! let store = Store::open(PathBuf::from("snapshots/tldsnap.snap"))?;
//! let snapshot = store.load().expect("opened above");
//! println!("serving {}", snapshot.snapshot.header().hash_hex());
//! // ... later, after the file was replaced:
//! match store.reload() {
//!     Ok(new) => println!("now serving {}", new.snapshot.header().hash_hex()),
//!     Err(err) => eprintln!("{err}"), // the old snapshot is still served
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`SwapObserver`] given to [`Store::observed`] is told about every swap before it
//! happens, with the snapshot being served and the one about to replace it, and may
//! refuse it (the price-change event log records each swap's events this way, durably,
//! before the new snapshot serves). The store knows nothing of what the observer does.
//!
//! Replace a snapshot file by writing a new file and renaming it over the old one (as
//! `tldsnap build` does). A snapshot is the process's own copy of the bytes it verified
//! ([`Snapshot::open`]), so a file rewritten in place, truncated or removed changes
//! nothing served: a reload that reads it half-written is refused and counted, and the
//! watcher tries again when the file changes.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use arc_swap::ArcSwapOption;

// A poisoned lock only means a reload panicked; the data it guards stays valid.
use crate::lock;
use crate::snapshot::{OpenError, Opening, Snapshot};

/// Bytes hashed between two yields of [`Store::reload_async`]: 256 KiB, ~30-60 µs of
/// xxh3 at memory speed, short enough that requests queued behind it barely notice.
pub const RELOAD_STEP: usize = 256 * 1024;

/// A snapshot as the store serves it.
pub struct Loaded {
    /// The opened, validated snapshot.
    pub snapshot: Snapshot,
    /// When it was swapped in, Unix milliseconds.
    pub loaded_at_ms: i64,
}

impl fmt::Debug for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loaded")
            .field("hash", &self.snapshot.header().hash_hex())
            .field("loaded_at_ms", &self.loaded_at_ms)
            .finish()
    }
}

/// Told about every swap before it happens ([`Store::observed`]).
pub trait SwapObserver: Send + Sync {
    /// Called with the snapshot being served (`None` before the first) and the one
    /// about to replace it, before any request can see the new one. Swaps are
    /// serialised, so `old` is exactly what `new` replaces. An error refuses the swap:
    /// the old snapshot keeps serving and the reload counts as failed.
    fn before_swap(&self, old: Option<&Snapshot>, new: &Snapshot) -> Result<(), String>;
}

/// Why a reload did not swap a new snapshot in. The old snapshot (if any) keeps serving.
#[derive(Debug)]
pub enum ReloadError {
    /// The store was not given a file to reload from (it serves a built-in snapshot).
    NoPath,
    /// The file could not be opened or failed validation.
    Open {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        source: OpenError,
    },
    /// The snapshot opened, but the swap observer refused it.
    Refused(String),
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReloadError::NoPath => {
                f.write_str("no snapshot file to reload from (serving the built-in snapshot)")
            }
            ReloadError::Open { path, source } => {
                write!(f, "snapshot {} refused: {source}", path.display())
            }
            ReloadError::Refused(why) => write!(f, "snapshot refused: {why}"),
        }
    }
}

impl std::error::Error for ReloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReloadError::NoPath | ReloadError::Refused(_) => None,
            ReloadError::Open { source, .. } => Some(source),
        }
    }
}

/// The snapshot being served, and where to reload it from.
pub struct Store {
    current: ArcSwapOption<Loaded>,
    path: Option<PathBuf>,
    /// Serialises reloads (SIGHUP and the watcher may fire together). Never taken by a
    /// request.
    reloading: Mutex<()>,
    /// The same for [`Store::reload_async`], whose critical section awaits.
    reloading_async: tokio::sync::Mutex<()>,
    /// Identity of the file version last tried (loaded or refused), so `watch` acts
    /// once per new version. Never taken by a request.
    tried: Mutex<Option<FileId>>,
    /// Told before every swap; may refuse it.
    observer: Option<Arc<dyn SwapObserver>>,
    /// Serialises swaps (the observer must see the snapshot being replaced). Never
    /// taken by a request.
    swapping: Mutex<()>,
    successes: AtomicU64,
    failures: AtomicU64,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("current", &self.current.load_full())
            .field("path", &self.path)
            .finish()
    }
}

impl Store {
    /// A store with nothing loaded yet (`/readyz` answers 503 until a swap), reloading
    /// from `path` when given.
    pub fn empty(path: Option<PathBuf>) -> Store {
        Store {
            current: ArcSwapOption::empty(),
            path,
            reloading: Mutex::new(()),
            reloading_async: tokio::sync::Mutex::new(()),
            tried: Mutex::new(None),
            observer: None,
            swapping: Mutex::new(()),
            successes: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// A store serving `snapshot`, reloading from `path` when given.
    pub fn with_snapshot(snapshot: Snapshot, path: Option<PathBuf>) -> Store {
        let store = Store::empty(path);
        store.current.store(Some(Arc::new(Loaded {
            snapshot,
            loaded_at_ms: crate::time::now_ms(),
        })));
        store
    }

    /// The same store, telling `observer` about every later swap before it happens
    /// (the snapshot already loaded is not a swap).
    pub fn observed(mut self, observer: Arc<dyn SwapObserver>) -> Store {
        self.observer = Some(observer);
        self
    }

    /// Opens the snapshot file at `path` and serves it; reloads read the same path.
    pub fn open(path: PathBuf) -> Result<Store, ReloadError> {
        let id = file_identity(&path);
        let snapshot = open_file(&path)?;
        let store = Store::with_snapshot(snapshot, Some(path));
        *lock(&store.tried) = id;
        Ok(store)
    }

    /// The snapshot to answer one request with, or `None` before the first load. Take
    /// it once per request and keep the `Arc` for the whole request.
    pub fn load(&self) -> Option<Arc<Loaded>> {
        self.current.load_full()
    }

    /// Whether a snapshot is loaded.
    pub fn is_ready(&self) -> bool {
        self.current.load().is_some()
    }

    /// The file reloads read, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Serves `snapshot` from now on, once the observer (if any) accepted it; requests
    /// already running finish on the one they took. Returns what is served now. The
    /// observer may do blocking I/O: in async code, call this from a blocking thread
    /// ([`Store::reload_async`] takes care of it).
    pub fn swap(&self, snapshot: Snapshot) -> Result<Arc<Loaded>, ReloadError> {
        let _one_at_a_time = lock(&self.swapping);
        if let Some(observer) = &self.observer {
            let old = self.current.load_full();
            // A panic in the observer is a refusal like any other: the old snapshot keeps
            // serving, the reload is counted and reported, and the watcher goes on.
            let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                observer.before_swap(old.as_ref().map(|l| &l.snapshot), &snapshot)
            }))
            .unwrap_or_else(|panic| {
                Err(format!(
                    "the swap's check failed: {}",
                    crate::blocking::panic_message(&*panic)
                ))
            });
            checked.map_err(ReloadError::Refused)?;
        }
        let loaded = Arc::new(Loaded {
            snapshot,
            loaded_at_ms: crate::time::now_ms(),
        });
        self.current.store(Some(Arc::clone(&loaded)));
        Ok(loaded)
    }

    /// [`Store::reload`] for a server: the same checks and the same swap, but the content
    /// hash advances [`RELOAD_STEP`] bytes at a time with a yield to the runtime between
    /// steps, on the runtime's own threads. A reload then never holds a core for more
    /// than one step (~50 µs), where a blocking thread beside a pinned worker would take
    /// whole scheduler slices (milliseconds) while requests wait. Reloads through this
    /// method are serialised with each other; `tldsnap serve` uses only this one.
    pub async fn reload_async(self: &Arc<Self>) -> Result<Arc<Loaded>, ReloadError> {
        let Some(path) = &self.path else {
            return Err(ReloadError::NoPath);
        };
        let _one_at_a_time = self.reloading_async.lock().await;
        *lock(&self.tried) = file_identity(path);
        let opened = Store::verify_async(path).await;
        self.install(opened).await
    }

    /// Opens and verifies the snapshot file at `path` as [`Store::reload_async`] does
    /// (the same checks, the content hash [`RELOAD_STEP`] bytes at a time with a yield
    /// between steps), without swapping it in: for a file that must pass before it is
    /// renamed into place (a download, `remote::Replica`).
    pub async fn verify_async(path: &Path) -> Result<Snapshot, ReloadError> {
        let refused = |source| ReloadError::Open {
            path: path.to_path_buf(),
            source,
        };
        match Opening::start(path) {
            Ok(mut opening) => {
                while !opening.step(RELOAD_STEP) {
                    tokio::task::yield_now().await;
                }
                opening.finish().map_err(refused)
            }
            Err(e) => Err(refused(e)),
        }
    }

    /// Ends a reload from async code: swaps in a snapshot that opened and that the
    /// observer accepts, or counts the refusal (the old snapshot keeps serving), exactly
    /// as [`Store::reload_async`] does with the file it opened.
    ///
    /// The observer compares snapshots and may write and sync a file: when there is one,
    /// the swap runs on a blocking thread while this task waits, so the worker answers
    /// requests meanwhile (on a `current_thread` runtime, `serve`'s, an fsync there
    /// stalled every connection of the worker; `block_in_place` exists only on the
    /// multi-thread runtime).
    pub async fn install(
        self: &Arc<Self>,
        opened: Result<Snapshot, ReloadError>,
    ) -> Result<Arc<Loaded>, ReloadError> {
        if self.observer.is_none() {
            return self.settle(opened);
        }
        let me = Arc::clone(self);
        match crate::blocking::run(move || me.settle(opened)).await {
            Ok(settled) => settled,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Opens the store's file aside and, only if it opens and validates, swaps it in.
    /// On failure the old snapshot keeps serving and the failure is counted. Blocking
    /// (maps and hashes the whole file): call it from a blocking thread in async code.
    pub fn reload(&self) -> Result<Arc<Loaded>, ReloadError> {
        let Some(path) = &self.path else {
            return Err(ReloadError::NoPath);
        };
        let _one_at_a_time = lock(&self.reloading);
        // Taken before opening: if the file is replaced in between, the watcher sees
        // a newer version than this one and loads again.
        *lock(&self.tried) = file_identity(path);
        self.settle(open_file(path))
    }

    /// Swaps in a snapshot that opened and that the observer accepts, or counts a
    /// refusal; the old one keeps serving.
    fn settle(&self, opened: Result<Snapshot, ReloadError>) -> Result<Arc<Loaded>, ReloadError> {
        match opened.and_then(|snapshot| self.swap(snapshot)) {
            Ok(loaded) => {
                self.successes.fetch_add(1, Relaxed);
                Ok(loaded)
            }
            Err(err) => {
                self.failures.fetch_add(1, Relaxed);
                Err(err)
            }
        }
    }

    /// Reloads that swapped a snapshot in.
    pub fn reload_successes(&self) -> u64 {
        self.successes.load(Relaxed)
    }

    /// Reloads refused; each left the old snapshot serving.
    pub fn reload_failures(&self) -> u64 {
        self.failures.load(Relaxed)
    }

    /// Polls the store's file every `interval` and reloads when it was replaced or
    /// changed (a different inode, size or modification time than the version last
    /// loaded or refused, by this watcher or by [`Store::reload`]), until `stop`
    /// resolves.
    /// Every outcome is reported to `report` (for logging). Returns at once when the
    /// store has no file.
    ///
    /// Polling rather than inotify keeps this portable and dependency-free; a snapshot
    /// is published by rename, so one `stat` per interval sees it.
    pub async fn watch<F>(
        self: Arc<Self>,
        interval: Duration,
        stop: impl std::future::Future<Output = ()>,
        report: F,
    ) where
        F: Fn(&Result<Arc<Loaded>, ReloadError>) + Send + Sync + 'static,
    {
        let Some(path) = self.path.clone() else {
            return;
        };
        tokio::pin!(stop);
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = ticker.tick() => {}
            }
            let now = file_identity(&path);
            // A file that vanished (mid-replace, or removed) is not a change to load.
            if now.is_none() || now == *lock(&self.tried) {
                continue;
            }
            let outcome = self.reload_async().await;
            report(&outcome);
        }
    }
}

fn open_file(path: &Path) -> Result<Snapshot, ReloadError> {
    Snapshot::open(path).map_err(|source| ReloadError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// What identifies one version of a file: (device, inode, length, mtime in ns).
type FileId = (u64, u64, u64, i128);

fn file_identity(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    Some((meta.dev(), meta.ino(), meta.len(), mtime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{BuildOptions, build_dir};

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(tag: &str) -> Dir {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).expect("random");
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p =
            std::env::temp_dir().join(format!("tldsnap-store-{tag}-{}-{hex}", std::process::id()));
        std::fs::create_dir_all(&p).expect("temp dir");
        Dir(p)
    }

    fn fixture(out: &Path) {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
        build_dir(&source, out, &BuildOptions::default()).expect("fixture builds");
    }

    fn replace(path: &Path, bytes: &[u8]) {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).expect("write");
        std::fs::rename(&tmp, path).expect("rename");
    }

    #[test]
    fn empty_until_a_reload_succeeds() {
        let d = dir("empty");
        let path = d.0.join("s.snap");
        let store = Store::empty(Some(path.clone()));
        assert!(!store.is_ready() && store.load().is_none());
        assert!(matches!(store.reload(), Err(ReloadError::Open { .. })));
        assert_eq!((store.reload_successes(), store.reload_failures()), (0, 1));
        fixture(&path);
        let loaded = store.reload().expect("reloads");
        assert!(store.is_ready());
        assert_eq!(
            store.load().expect("loaded").snapshot.header(),
            loaded.snapshot.header()
        );
        assert_eq!((store.reload_successes(), store.reload_failures()), (1, 1));
    }

    #[test]
    fn a_bad_file_keeps_the_old_snapshot() {
        let d = dir("bad");
        let path = d.0.join("s.snap");
        fixture(&path);
        let store = Store::open(path.clone()).expect("opens");
        let before = store.load().expect("loaded");
        let good = std::fs::read(&path).expect("read");
        for bad in [&b""[..], b"TLDSNAP", &good[..good.len() - 1]] {
            replace(&path, bad);
            let err = store.reload().expect_err("refused");
            assert!(err.to_string().contains("refused"), "{err}");
            assert!(Arc::ptr_eq(&store.load().expect("still loaded"), &before));
        }
        assert_eq!(store.reload_failures(), 3);
        // A request that took the old snapshot keeps it across a successful swap.
        replace(&path, &good);
        let after = store.reload().expect("good again");
        assert!(!Arc::ptr_eq(&after, &before));
        assert_eq!(
            before.snapshot.data().tld_count(),
            after.snapshot.data().tld_count()
        );
    }

    #[test]
    fn no_path_means_nothing_to_reload() {
        let d = dir("nopath");
        let path = d.0.join("s.snap");
        fixture(&path);
        let snapshot = Snapshot::open(&path).expect("opens");
        let store = Store::with_snapshot(snapshot, None);
        assert!(matches!(store.reload(), Err(ReloadError::NoPath)));
        assert!(store.is_ready());
        assert_eq!(store.reload_failures(), 0);
    }

    #[test]
    fn file_identity_changes_when_a_file_is_replaced() {
        let d = dir("identity");
        let path = d.0.join("f");
        assert_eq!(file_identity(&path), None);
        replace(&path, b"one");
        let first = file_identity(&path);
        replace(&path, b"two");
        assert!(first.is_some());
        assert_ne!(file_identity(&path), first);
    }
}
