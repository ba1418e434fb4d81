//! Who may ask, how often, and how much: API keys, plans, rate limits and monthly
//! credits (docs/METERING.md).
//!
//! The HTTP layer calls two functions per request, in the order of checks (docs/API.md, "Order of checks"):
//!
//! 1. [`Access::admit`] before anything else: the key (401), then the rate limit (429
//!    `rate_limited`). Every keyed request takes a token, whatever happens next.
//! 2. [`Access::spend`] once the answer is known to be a 2xx: takes one credit, or
//!    refuses with 429 `credits_exhausted` until the UTC month turns.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tldsnap::access::{Access, AccessConfig, clock::SystemClock, plans::Plans};
//!
//! let access = Access::new(AccessConfig {
//!     plans: Plans::default(),
//!     keys_path: Some("keys.json".into()),
//!     data_dir: Some("data".into()),
//!     usage_store: None,
//!     clock: Arc::new(SystemClock),
//! })
//! .await?;
//! let client = "127.0.0.1".parse()?;
//! match access.admit(Some(b"tsk_..."), client, true).await {
//!     Ok(mut caller) => {
//!         // ... parameters, plan (caller.tld_allowed), existence ...
//!         if access.spend(&mut caller).await.is_ok() { /* 200 */ }
//!     }
//!     Err(denial) => { /* 401 or 429 */ let _ = denial.code(); }
//! }
//! access.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! # Cost on the request path
//!
//! A keyed request costs one SHA-256 of the presented key, two lookups in a hash map
//! read through [`arc_swap`] (no lock; one in `admit`, one in `spend`), one
//! compare-and-swap on the key's rate-limit word and one on its credit word. Nothing is shared by all requests and nothing
//! touches the disk: the embedded store is written once a second by a background task.
//! With Redis, credits are leased in blocks so that most requests never talk to Redis.
//! `docs/METERING.md` describes the policies (month rollover, durability, Redis).
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`plans`] | the plan table, the free TLDs, the plans-file override |
//! | [`keys`] | the keys file, SHA-256 and constant-time comparison, key generation |
//! | [`rate`] | GCRA buckets per key and per client address |
//! | [`month`] | UTC months and the one-word month-scoped counter |
//! | [`usage`] | the embedded durable store (`DATA_DIR/usage.json`) |
//! | [`remote`] | the Redis client, leases and outage reconciliation |
//! | [`journal`] | with Redis and a data directory: what this run spent, in a mapped file that survives `kill -9`, and the hand-back of a dead run's leases |
//! | [`clock`] | the time source (system or manual) |

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;

use crate::lock;

pub mod clock;
pub mod journal;
pub mod keys;
pub mod month;
pub mod plans;
pub mod rate;
pub mod remote;
pub mod usage;

use clock::Clock;
use keys::KeysFile;
use month::{MonthCounter, month_of, secs_until_next_month};
use plans::{Plan, Plans};
use rate::{AddressLimiter, Bucket, Decision};

/// How often the background task persists usage (embedded store) and reconciles leases
/// (Redis). This is the "at most one second of counts" of the crash guarantee.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Everything [`Access::new`] needs.
pub struct AccessConfig {
    /// The plans (defaults, or defaults with a plans file applied).
    pub plans: Plans,
    /// The keys file. `None`: no keys, every client call is 401.
    pub keys_path: Option<PathBuf>,
    /// The data directory, locked for this process's life: the embedded durable usage
    /// store, or with `usage_store` the credit journal ([`journal`]). `None`: usage is
    /// kept in memory only (tests), and a crashed replica's leases stay counted.
    pub data_dir: Option<PathBuf>,
    /// `Some("redis://HOST:PORT")`: credits are shared through Redis by every replica.
    pub usage_store: Option<String>,
    /// The time source for rate limits and months.
    pub clock: Arc<dyn Clock>,
}

/// What the HTTP layer writes as `RateLimit-Limit` (the burst), `RateLimit-Remaining`
/// (whole requests left in the bucket), `RateLimit-Reset` (seconds until the bucket is
/// full) and `X-Credits-Remaining`, on every keyed response, errors included.
///
/// A plan without a rate limit reports `limit` and `remaining` as `u32::MAX` and
/// `reset_secs` as 0; a plan without a credit limit reports `credits_remaining: None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterHeaders {
    /// `RateLimit-Limit`: the bucket size (the plan's burst).
    pub limit: u32,
    /// `RateLimit-Remaining`: whole requests that could be sent now.
    pub remaining: u32,
    /// `RateLimit-Reset`: seconds until the bucket is full again.
    pub reset_secs: u64,
    /// `X-Credits-Remaining`: credits left this month (`None`: unlimited).
    pub credits_remaining: Option<u64>,
}

/// Why a request is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// 401 `missing_api_key`: a client endpoint without `X-API-Key`.
    MissingKey,
    /// 401 `invalid_api_key`: a key that is not in the keys file.
    InvalidKey,
    /// 429 `rate_limited`, with `Retry-After`.
    RateLimited {
        /// Seconds until one request would be allowed.
        retry_after_secs: u64,
        /// The caller's meter headers (present for keyed and public callers alike).
        headers: Option<MeterHeaders>,
    },
    /// 429 `credits_exhausted`, with `Retry-After` until the UTC month turns.
    CreditsExhausted {
        /// Seconds until the next calendar month (UTC) begins.
        retry_after_secs: u64,
        /// The caller's meter headers (`credits_remaining: Some(0)`).
        headers: MeterHeaders,
    },
}

impl Denial {
    /// The error code (docs/API.md, "Errors").
    pub fn code(&self) -> &'static str {
        match self {
            Denial::MissingKey => "missing_api_key",
            Denial::InvalidKey => "invalid_api_key",
            Denial::RateLimited { .. } => "rate_limited",
            Denial::CreditsExhausted { .. } => "credits_exhausted",
        }
    }

    /// The HTTP status: 401 or 429.
    pub fn status(&self) -> u16 {
        match self {
            Denial::MissingKey | Denial::InvalidKey => 401,
            Denial::RateLimited { .. } | Denial::CreditsExhausted { .. } => 429,
        }
    }

    /// Seconds for `Retry-After` (429 only).
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Denial::RateLimited {
                retry_after_secs, ..
            }
            | Denial::CreditsExhausted {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The meter headers to send with the refusal, if any.
    pub fn headers(&self) -> Option<MeterHeaders> {
        match self {
            Denial::RateLimited { headers, .. } => *headers,
            Denial::CreditsExhausted { headers, .. } => Some(*headers),
            _ => None,
        }
    }
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Denial::MissingKey => {
                f.write_str("this endpoint needs an API key in the X-API-Key header")
            }
            Denial::InvalidKey => f.write_str("the API key is not valid"),
            Denial::RateLimited {
                retry_after_secs, ..
            } => write!(f, "too many requests; retry in {retry_after_secs} s"),
            Denial::CreditsExhausted {
                retry_after_secs, ..
            } => write!(
                f,
                "this month's credits are used up; they renew in {retry_after_secs} s, when the UTC month turns"
            ),
        }
    }
}

/// A failure the operator can act on (bad files, unreachable directories or stores).
#[derive(Debug)]
pub enum AccessError {
    /// A file or directory could not be read or written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done, e.g. "read the keys file".
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The plans file is not valid.
    PlansFile {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
    /// The keys file is not valid.
    KeysFile {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
    /// The usage file under the data directory is not valid.
    UsageFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Another process holds the data directory.
    DataDirInUse {
        /// The directory.
        dir: PathBuf,
    },
    /// The `--usage-store` address is not usable.
    UsageStore {
        /// The address as given.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The operating system's random source failed.
    Random(String),
}

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccessError::Io {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            AccessError::PlansFile { path, message } => {
                write!(f, "plans file {}: {message}", path.display())
            }
            AccessError::KeysFile { path, message } => {
                write!(f, "keys file {}: {message}", path.display())
            }
            AccessError::UsageFile { path, message } => {
                write!(f, "usage file {}: {message}", path.display())
            }
            AccessError::UsageStore { url, message } => {
                write!(f, "usage store {url}: {message}")
            }
            AccessError::DataDirInUse { dir } => write!(
                f,
                "the data directory {} is in use by another process (it holds {}); one data \
                 directory belongs to one server",
                dir.display(),
                dir.join(DATA_DIR_LOCK).display()
            ),
            AccessError::Random(e) => write!(f, "the system's random source failed: {e}"),
        }
    }
}

impl std::error::Error for AccessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AccessError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An admitted caller: who it is, on which plan, and its meter readings.
///
/// A keyed caller that [`Caller::enter`]ed counts as one of its key's requests in
/// flight until it (and every clone of it) is dropped.
#[derive(Debug)]
pub struct Caller {
    /// The key's entry (id, plan, meter) found at admission, or the public plan for a
    /// caller without a key: one reference count taken per request, not one for each
    /// of the three.
    who: Who,
    /// Meter headers; `Some` for every keyed caller (and for public callers, with
    /// `credits_remaining: None`).
    pub headers: Option<MeterHeaders>,
    /// The clock reading at admission, reused by [`Access::spend`]: one clock read per
    /// request, and a request is charged to the month it was admitted in.
    admitted_ms: i64,
    /// Counted in its key's [`Meter::in_flight`] ([`Caller::enter`]), until dropped.
    in_flight: bool,
}

impl Clone for Caller {
    /// A clone counted as a request in flight too (it is one more holder of the
    /// request), without the check of [`Caller::enter`].
    fn clone(&self) -> Caller {
        if self.in_flight
            && let Some(meter) = self.meter()
        {
            meter.in_flight.fetch_add(1, Ordering::Relaxed);
        }
        Caller {
            who: self.who.clone(),
            headers: self.headers,
            admitted_ms: self.admitted_ms,
            in_flight: self.in_flight,
        }
    }
}

impl Drop for Caller {
    #[inline]
    fn drop(&mut self) {
        if self.in_flight
            && let Some(meter) = self.meter()
        {
            meter.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Who an admitted [`Caller`] is.
#[derive(Clone)]
enum Who {
    /// A key in force at admission (a key revoked since is still charged on its meter,
    /// so that [`Access::spend`] need not look it up again).
    Key(Arc<KeyEntry>),
    /// An unauthenticated public caller, on the public plan.
    Public(Arc<Plan>),
}

impl std::fmt::Debug for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key's id and plan: never its digest.
        match self {
            Who::Key(entry) => f
                .debug_struct("Key")
                .field("id", &entry.id)
                .field("plan", &entry.plan.name)
                .finish_non_exhaustive(),
            Who::Public(plan) => f.debug_tuple("Public").field(&plan.name).finish(),
        }
    }
}

impl Caller {
    /// The clock reading at admission (ms since the Unix epoch): "now" for the rest of
    /// the request, without another clock read.
    pub fn admitted_ms(&self) -> i64 {
        self.admitted_ms
    }

    /// The plan's name, for `meta.tier`.
    pub fn tier(&self) -> &str {
        &self.plan().name
    }

    /// Whether the plan may query `tld` (canonical form).
    pub fn tld_allowed(&self, tld: &str) -> bool {
        self.plan().covers(tld)
    }

    /// The caller's plan.
    pub fn plan(&self) -> &Arc<Plan> {
        match &self.who {
            Who::Key(entry) => &entry.plan,
            Who::Public(plan) => plan,
        }
    }

    /// Counts the request as one of its key's requests in flight (being answered now,
    /// across the server), until the caller is dropped; `false`, counting nothing, when
    /// the key already has `max` in flight. One atomic add on the key's meter (and one
    /// subtraction when dropped); a caller without a key is not counted and always
    /// enters.
    #[inline]
    pub fn enter(&mut self, max: usize) -> bool {
        let Some(meter) = self.meter() else {
            return true;
        };
        if self.in_flight {
            return true;
        }
        let before = meter.in_flight.fetch_add(1, Ordering::Relaxed);
        if before as usize >= max {
            meter.in_flight.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        self.in_flight = true;
        true
    }

    /// The key's id; `None` for an unauthenticated public caller.
    pub fn key_id(&self) -> Option<&Arc<str>> {
        match &self.who {
            Who::Key(entry) => Some(&entry.id),
            Who::Public(_) => None,
        }
    }

    /// The key's meter; `None` for an unauthenticated public caller.
    fn meter(&self) -> Option<&Arc<Meter>> {
        match &self.who {
            Who::Key(entry) => Some(&entry.meter),
            Who::Public(_) => None,
        }
    }

    /// What the caller's plan shows of the prices: every door asks it.
    pub fn sight(&self) -> plans::Sight {
        self.plan().sight()
    }
}

/// Per-key metering state. It outlives key reloads (found again by id), so revoking and
/// restoring a key, or editing its label, never resets its usage.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    /// Embedded store: credits used this month. Redis: this replica's successes.
    pub(crate) used: MonthCounter,
    /// Rate-limit state.
    pub(crate) bucket: Bucket,
    /// Redis lease state, made on first use ([`Meter::lease`]): the embedded store
    /// never makes it, which saves ~70 bytes per key (0.6 MB for 10,000 keys).
    lease: std::sync::OnceLock<Box<remote::Lease>>,
    /// Redis with a data directory: this month's record in the credit journal.
    pub(crate) journal: journal::Slot,
    /// Domain searches today: a [`MonthCounter`] keyed by UTC day number instead of
    /// month (the same one-word "count of the newest period" logic). Held in memory
    /// only: a restart forgives the day's searches (see `docs/METERING.md`).
    pub(crate) searches: MonthCounter,
    /// The key's requests being answered now, on this server ([`Caller::enter`]).
    pub(crate) in_flight: std::sync::atomic::AtomicU32,
}

impl Meter {
    /// The Redis lease state (made on first use).
    pub(crate) fn lease(&self) -> &remote::Lease {
        self.lease.get_or_init(Box::default)
    }
}

struct KeyEntry {
    id: Arc<str>,
    plan: Arc<Plan>,
    digest: [u8; 32],
    meter: Arc<Meter>,
}

/// The keys in force, read on every request through an `ArcSwap` (no lock).
#[derive(Default)]
struct KeyTable {
    /// By SHA-256 digest of the raw key.
    by_digest: DigestIndex,
    by_id: ahash::AHashMap<Arc<str>, Arc<KeyEntry>>,
    /// Unique per table built in this process, so a [`KeyCache`] can tell that the keys
    /// changed (a reload) since it remembered one.
    generation: u64,
}

/// Key entries by digest: open addressing with linear probing over a power-of-two table
/// at most 70% full, each slot the first 8 bytes of a digest (which also choose the
/// first slot) and its entry. The whole digest of an entry whose prefix matches is then
/// compared in constant time; what probing can reveal is digest prefixes, which say
/// nothing about any key without a SHA-256 preimage.
///
/// A lookup reads one slot (24 bytes) and the entry it needs anyway, where a map of
/// vectors read the map's control bytes and bucket, a vector and the entry: with 10,000
/// keys in turn each was a cache miss (`docs/PERFORMANCE.md`, "Key population"). The
/// slot also holds the address of the entry's meter, which admission reads next: the
/// lookup asks the CPU for it while it reads the entry, so that the two misses overlap
/// instead of following each other. 24 bytes a slot: 384 KiB for 10,000 keys (the map
/// of vectors took ~0.8 MB).
#[derive(Default)]
struct DigestIndex {
    slots: Box<[DigestSlot]>,
}

#[derive(Default)]
struct DigestSlot {
    prefix: u64,
    /// The address of the entry's [`Meter`], only ever prefetched (never read through).
    meter: usize,
    /// `None`: an empty slot, which ends a probe.
    entry: Option<Arc<KeyEntry>>,
}

impl DigestIndex {
    /// The index of `entries`; a digest listed twice keeps the later entry.
    fn new(entries: Vec<Arc<KeyEntry>>) -> DigestIndex {
        if entries.is_empty() {
            return DigestIndex::default();
        }
        let len = (entries.len() * 10 / 7 + 1).next_power_of_two().max(8);
        let mut slots: Box<[DigestSlot]> = (0..len).map(|_| DigestSlot::default()).collect();
        let mask = len - 1;
        for entry in entries {
            let p = prefix(&entry.digest);
            let mut i = p as usize & mask;
            // The first slot that is empty or holds the same digest (replaced).
            while slot_taken_by_another(&slots[i], &entry) {
                i = (i + 1) & mask;
            }
            slots[i] = DigestSlot {
                prefix: p,
                meter: Arc::as_ptr(&entry.meter) as usize,
                entry: Some(entry),
            };
        }
        DigestIndex { slots }
    }

    /// The entry of the key whose digest is `digest`.
    fn get(&self, digest: &[u8; 32]) -> Option<&Arc<KeyEntry>> {
        let mask = self.slots.len().checked_sub(1)?;
        let p = prefix(digest);
        let mut i = p as usize & mask;
        // At least 30% of the slots are free: the probe ends.
        loop {
            let slot = &self.slots[i];
            let entry = slot.entry.as_ref()?;
            if slot.prefix == p {
                prefetch(slot.meter);
                if keys::ct_eq(&entry.digest, digest) {
                    return Some(entry);
                }
            }
            i = (i + 1) & mask;
        }
    }
}

/// Asks the CPU to bring the cache line at `addr` in (a hint: it changes no result).
#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing into the program and never faults, whatever the
    // address (the intrinsic is `unsafe` only for its target feature, SSE, which every
    // x86-64 CPU has).
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(addr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Whether `slot` holds the entry of another digest than `entry`'s.
fn slot_taken_by_another(slot: &DigestSlot, entry: &KeyEntry) -> bool {
    slot.entry
        .as_ref()
        .is_some_and(|e| e.digest != entry.digest)
}

/// Source of [`KeyTable::generation`].
static TABLE_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The last API key one connection presented and what it resolved to.
///
/// A client sends the same `X-API-Key` on every request of a keep-alive connection; with
/// this cache the server hashes it once per connection instead of once per request. The
/// raw key is held only as long as the connection (whose buffers hold it anyway), is
/// compared in constant time, and the cached answer is dropped as soon as the keys are
/// reloaded. Create one per connection with `KeyCache::default()`.
#[derive(Default)]
pub struct KeyCache {
    raw: Vec<u8>,
    generation: u64,
    entry: Option<Arc<KeyEntry>>,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("KeyCache")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// Constant-time equality of two byte strings of the same length (the length itself is
/// not secret: every key has the same length).
struct Inner {
    plans: Plans,
    public_plan: Arc<Plan>,
    keys_path: Option<PathBuf>,
    table: ArcSwap<KeyTable>,
    /// The [`KeyTable::generation`] of `table`, stored after each swap: a connection's
    /// [`KeyCache`] checks it with one atomic load instead of loading the table.
    generation: AtomicU64,
    /// Every meter ever made (including revoked keys and keys only known from the usage
    /// file), by id. Touched on reload and flush, never on the request path.
    meters: Mutex<ahash::AHashMap<Arc<str>, Arc<Meter>>>,
    clock: Arc<dyn Clock>,
    addresses: AddressLimiter,
    /// Embedded store: the usage file and the bytes last written to it. The mutex orders
    /// flushes (each runs whole on a blocking thread), so an older picture never
    /// overwrites a newer one.
    usage: Option<(PathBuf, Mutex<Vec<u8>>)>,
    remote: Option<remote::Remote>,
    /// Redis with a data directory: what this run spends, and earlier runs to hand back.
    journal: Option<Arc<journal::Journal>>,
    /// The data directory's lock, held as long as this.
    _dir_lock: Option<std::fs::File>,
}

/// The lock file that makes a data directory one process's.
pub const DATA_DIR_LOCK: &str = "tldsnap.lock";

/// Creates the data directory if needed and locks it for this process, at once or not
/// at all: two servers on one directory would overwrite each other's usage, and a
/// replica would hand back the leases of another that is alive.
fn lock_data_dir(dir: &std::path::Path) -> Result<std::fs::File, AccessError> {
    crate::files::create_dir(dir, crate::files::Mode::Private).map_err(|e| AccessError::Io {
        path: dir.to_path_buf(),
        action: "create the data directory",
        source: e,
    })?;
    match crate::files::try_lock_in(dir, DATA_DIR_LOCK) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(AccessError::DataDirInUse {
            dir: dir.to_path_buf(),
        }),
        Err(e) => Err(AccessError::Io {
            path: dir.join(DATA_DIR_LOCK),
            action: "lock",
            source: e,
        }),
    }
}

/// Keys, plans, rate limits and credits for the whole server. `Send + Sync`; share it
/// behind an `Arc`.
pub struct Access {
    inner: Arc<Inner>,
    stop: tokio::sync::watch::Sender<bool>,
}

fn unlimited_rate() -> Decision {
    Decision {
        allowed: true,
        limit: u32::MAX,
        remaining: u32::MAX,
        reset_secs: 0,
        retry_after_secs: 0,
    }
}

fn headers_of(d: &Decision, credits_remaining: Option<u64>) -> MeterHeaders {
    MeterHeaders {
        limit: d.limit,
        remaining: d.remaining,
        reset_secs: d.reset_secs,
        credits_remaining,
    }
}

impl Access {
    /// Loads the keys file, the usage of this month (embedded store) and connects to the
    /// usage store (Redis), then starts the background task that persists usage once a
    /// second. A Redis that cannot be reached at start is not an error: the service
    /// starts on local counts and reconciles when Redis comes (see `docs/METERING.md`).
    pub async fn new(config: AccessConfig) -> Result<Access, AccessError> {
        let AccessConfig {
            plans,
            keys_path,
            data_dir,
            usage_store,
            clock,
        } = config;
        let keys = match &keys_path {
            Some(p) => KeysFile::load(p, Some(&plans))?,
            None => KeysFile::default(),
        };
        let mut meters: ahash::AHashMap<Arc<str>, Arc<Meter>> = ahash::AHashMap::new();
        let dir_lock = data_dir.as_deref().map(lock_data_dir).transpose()?;
        let remote = match &usage_store {
            Some(url) => Some(remote::Remote::new(url).await?),
            None => None,
        };
        let usage = match (&data_dir, &remote) {
            (Some(dir), None) => {
                let path = usage::prepare(dir)?;
                for (id, (month, used)) in usage::read(dir)? {
                    let m = Meter {
                        used: MonthCounter::new(month, used),
                        ..Meter::default()
                    };
                    meters.insert(Arc::from(id.as_str()), Arc::new(m));
                }
                let mut written = std::fs::read(&path).unwrap_or_default();
                if written.is_empty() {
                    // Write the (empty) file now, so that an unwritable data directory
                    // stops the server at start rather than failing once a second.
                    written = usage::encode(&usage::UsageMap::new());
                    usage::write(&path, &written)?;
                }
                Some((path, Mutex::new(written)))
            }
            _ => None,
        };
        let journal = match (&data_dir, &remote) {
            (Some(dir), Some(r)) => {
                let j = journal::Journal::open(dir, r.replica_id(), clock.now_ms())?;
                eprintln!(
                    "tldsnap: credits are kept in the usage store; what this run spends is journaled in {}",
                    j.path().display()
                );
                // Earlier runs' unspent leases go back before this one serves; with
                // Redis unreachable, the background task retries once a second.
                if j.pending().await > 0 && !j.hand_back(r, clock.now_ms()).await {
                    eprintln!(
                        "tldsnap: usage store: earlier runs' leases are not handed back yet (Redis unreachable); retrying once a second"
                    );
                }
                Some(Arc::new(j))
            }
            _ => None,
        };
        let table = build_table(&keys, &plans, &mut meters)?;
        let inner = Arc::new(Inner {
            public_plan: plans.public(),
            plans,
            keys_path,
            generation: AtomicU64::new(table.generation),
            table: ArcSwap::from_pointee(table),
            meters: Mutex::new(meters),
            clock,
            addresses: AddressLimiter::default(),
            usage,
            remote,
            journal,
            _dir_lock: dir_lock,
        });
        let (stop, stopped) = tokio::sync::watch::channel(false);
        if inner.usage.is_some() || inner.remote.is_some() {
            tokio::spawn(background(Arc::downgrade(&inner), stopped));
        }
        Ok(Access { inner, stop })
    }

    /// The plans in force.
    pub fn plans(&self) -> &Plans {
        &self.inner.plans
    }

    /// Number of keys in force.
    pub fn key_count(&self) -> usize {
        self.inner.table.load().by_id.len()
    }

    /// Steps 1-2 of the order of checks: key (401) then rate limit (429 rate_limited).
    /// `api_key`: the raw X-API-Key header value if present. `requires_key`: true on
    /// client endpoints; on public variants a missing key means the `public` plan, metered
    /// per `client` address; a present-but-unknown key is still 401 invalid_api_key.
    pub async fn admit(
        &self,
        api_key: Option<&[u8]>,
        client: IpAddr,
        requires_key: bool,
    ) -> Result<Caller, Denial> {
        self.admit_cached(&mut KeyCache::default(), api_key, client, requires_key)
            .await
    }

    /// [`Access::admit`] with a per-connection [`KeyCache`]: the key is hashed only when
    /// it differs from the one the connection sent last, or the keys were reloaded.
    pub async fn admit_cached(
        &self,
        cache: &mut KeyCache,
        api_key: Option<&[u8]>,
        client: IpAddr,
        requires_key: bool,
    ) -> Result<Caller, Denial> {
        self.admit_now(api_key.map(|raw| (raw, cache)), client, requires_key)
    }

    /// [`Access::admit_cached`], which never waits: admission reads only memory (the
    /// key table, the bucket, the credit counters), with either usage store. The request
    /// path calls this, without the cost of another future. The key comes with the
    /// connection's [`KeyCache`]: a request without one needs none (nor its lock).
    pub fn admit_now(
        &self,
        api_key: Option<(&[u8], &mut KeyCache)>,
        client: IpAddr,
        requires_key: bool,
    ) -> Result<Caller, Denial> {
        let inner = &self.inner;
        let now = inner.clock.now_ms();
        let Some((raw, cache)) = api_key else {
            if requires_key {
                return Err(Denial::MissingKey);
            }
            let plan = inner.public_plan.clone();
            let d = match (plan.rate_per_second, plan.burst) {
                // Rate limits decide by the precise clock (clock.rs: SystemClock).
                (Some(r), Some(b)) => {
                    inner
                        .addresses
                        .check(client, inner.clock.precise_now_ms(), r, b)
                }
                _ => unlimited_rate(),
            };
            let headers = Some(headers_of(&d, None));
            if !d.allowed {
                return Err(Denial::RateLimited {
                    retry_after_secs: d.retry_after_secs,
                    headers,
                });
            }
            return Ok(Caller {
                who: Who::Public(plan),
                headers,
                admitted_ms: now,
                in_flight: false,
            });
        };
        let entry = self.lookup(raw, cache).ok_or(Denial::InvalidKey)?;
        let d = match (entry.plan.rate_per_second, entry.plan.burst) {
            (Some(r), Some(b)) => entry.meter.bucket.check(inner.clock.precise_now_ms(), r, b),
            _ => unlimited_rate(),
        };
        let credits = self.credits_remaining(&entry.meter, &entry.plan, month_of(now));
        let headers = headers_of(&d, credits);
        if !d.allowed {
            return Err(Denial::RateLimited {
                retry_after_secs: d.retry_after_secs,
                headers: Some(headers),
            });
        }
        Ok(Caller {
            who: Who::Key(entry),
            headers: Some(headers),
            admitted_ms: now,
            in_flight: false,
        })
    }

    /// Step 6-7: the answer is a 2xx; take one credit (keyed callers only). On success
    /// updates caller.headers' credits_remaining. Exact under concurrency.
    pub async fn spend(&self, caller: &mut Caller) -> Result<(), Denial> {
        self.spend_n(caller, 1).await
    }

    /// Like [`Access::spend`], for an answer that costs `n` credits (a portfolio audit).
    /// All or nothing with the embedded store; with Redis the credits are taken one
    /// lease at a time, after checking that `n` are left, so a refusal spends nothing
    /// unless another replica spends the same credits in between.
    pub async fn spend_n(&self, caller: &mut Caller, n: u64) -> Result<(), Denial> {
        if let Some(done) = self.spend_now(caller, n) {
            return done;
        }
        let (Some(id), Some(meter), Some(r)) = (
            caller.key_id().cloned(),
            caller.meter().cloned(),
            &self.inner.remote,
        ) else {
            return Ok(());
        };
        let now = caller.admitted_ms;
        let month = month_of(now);
        let limit = caller.plan().credits_per_month;
        let left = limit.map(|l| l.saturating_sub(meter.lease().used_estimate(month)));
        let result = if left.is_some_and(|left| left < n) {
            Err(())
        } else {
            // The journal's record exists before anything is claimed in Redis, and a
            // credit is journaled as soon as it is taken.
            if let Some(j) = &self.inner.journal {
                j.prepare(&meter.journal, &id, month);
            }
            let mut result = Ok(left);
            for _ in 0..n.max(1) {
                result = r.spend(&id, &meter, now, limit).await;
                if result.is_err() {
                    break;
                }
                journal::Journal::add(&meter.journal, month, 1);
            }
            result
        };
        Self::settle(caller, result)
    }

    /// [`Access::spend_n`] when it needs no waiting: always with the embedded store (one
    /// compare-and-swap on the key's credit word), and for callers without a key;
    /// `None` for a keyed caller when credits are kept in Redis (call `spend_n`). The
    /// request path calls this first, without the cost of another future.
    pub fn spend_now(&self, caller: &mut Caller, n: u64) -> Option<Result<(), Denial>> {
        // Keyed callers carry the meter found at admission (a key revoked since is still
        // charged on it); unauthenticated public callers spend nothing.
        let Some(meter) = caller.meter() else {
            return Some(Ok(()));
        };
        if self.inner.remote.is_some() {
            return None;
        }
        let limit = caller.plan().credits_per_month;
        let result = meter
            .used
            .try_add(month_of(caller.admitted_ms), n, limit)
            .map(|used| limit.map(|l| l.saturating_sub(used)))
            .map_err(|_| ());
        Some(Self::settle(caller, result))
    }

    /// The end of a spend: the caller's meter headers with the credits left, or the
    /// refusal. `#[inline]`: [`Access::spend_now`] runs it for every metered request,
    /// and left to itself the compiler stopped inlining it when unrelated code of the
    /// crate changed (+9 instructions a request, callgrind).
    #[inline]
    fn settle(caller: &mut Caller, result: Result<Option<u64>, ()>) -> Result<(), Denial> {
        let now = caller.admitted_ms;
        let mut headers = caller.headers.unwrap_or_else(|| {
            let d = match (
                caller.meter(),
                caller.plan().rate_per_second,
                caller.plan().burst,
            ) {
                (Some(meter), Some(r), Some(b)) => meter.bucket.peek(now, r, b),
                _ => unlimited_rate(),
            };
            headers_of(&d, None)
        });
        match result {
            Ok(remaining) => {
                headers.credits_remaining = remaining;
                caller.headers = Some(headers);
                Ok(())
            }
            Err(()) => {
                headers.credits_remaining = Some(0);
                caller.headers = Some(headers);
                Err(Denial::CreditsExhausted {
                    retry_after_secs: secs_until_next_month(now),
                    headers,
                })
            }
        }
    }

    /// Counts one domain search against the caller's plan's `searches_per_day` (per key,
    /// per UTC day). `Err(seconds)` when today's are used up: the time until the next
    /// UTC midnight, for `Retry-After`. Callers without a key or a daily limit always
    /// pass. Returns the searches left today (`None`: unlimited).
    pub fn take_search(&self, caller: &Caller) -> Result<Option<u64>, u64> {
        let (Some(limit), Some(meter)) = (caller.plan().searches_per_day, caller.meter()) else {
            return Ok(None);
        };
        let now = caller.admitted_ms;
        let day = now.div_euclid(crate::time::MS_PER_DAY);
        let day = u32::try_from(day).unwrap_or(0);
        match meter.searches.try_add(day, 1, Some(u64::from(limit))) {
            Ok(used) => Ok(Some(u64::from(limit).saturating_sub(used))),
            Err(_) => Err(secs_until_next_day(now)),
        }
    }

    /// Credits the key `id` has used this month, as this server counts them (embedded:
    /// exact; Redis: the last total seen plus local spending not yet reconciled).
    pub fn used_this_month(&self, id: &str) -> u64 {
        let month = month_of(self.inner.clock.now_ms());
        let meter = meter_for(&self.inner.meters, id);
        match &self.inner.remote {
            None => meter.used.get(month),
            Some(_) => meter.lease().used_estimate(month),
        }
    }

    fn credits_remaining(&self, meter: &Meter, plan: &Plan, month: u32) -> Option<u64> {
        let limit = plan.credits_per_month?;
        let used = match &self.inner.remote {
            None => meter.used.get(month),
            Some(_) => meter.lease().used_estimate(month),
        };
        Some(limit.saturating_sub(used))
    }

    fn lookup(&self, raw: &[u8], cache: &mut KeyCache) -> Option<Arc<KeyEntry>> {
        // The connection's last verdict holds while the table it came from is in force.
        if cache.generation == self.inner.generation.load(Ordering::Acquire)
            && keys::ct_eq(&cache.raw, raw)
        {
            return cache.entry.clone();
        }
        let table = self.inner.table.load();
        let digest = keys::hash_key(raw);
        let found = table.by_digest.get(&digest).cloned();
        cache.raw.clear();
        cache.raw.extend_from_slice(raw);
        cache.generation = table.generation;
        cache.entry = found.clone();
        found
    }

    /// The access clock's reading, ms since the Unix epoch (sessions expire by it).
    pub fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// The plan of the key `id`, if that key is in force now (a revoked key's is not).
    /// Web sessions hold a key id and look it up here on every page view.
    pub fn plan_of(&self, id: &str) -> Option<Arc<Plan>> {
        self.inner
            .table
            .load()
            .by_id
            .get(id)
            .map(|e| e.plan.clone())
    }

    /// The id and plan of a raw key, without metering (web sign-in): hashed and compared
    /// in constant time like [`Access::admit`].
    pub fn identify(&self, raw: &[u8]) -> Option<(Arc<str>, Arc<Plan>)> {
        self.lookup(raw, &mut KeyCache::default())
            .map(|e| (e.id.clone(), e.plan.clone()))
    }

    /// Re-reads the keys file (SIGHUP). Old keys keep working if the file is bad.
    /// Returns the number of keys now in force.
    pub fn reload_keys(&self) -> Result<usize, AccessError> {
        let inner = &self.inner;
        let Some(path) = &inner.keys_path else {
            return Ok(0);
        };
        let file = KeysFile::load(path, Some(&inner.plans))?;
        let mut meters = lock(&inner.meters);
        let table = build_table(&file, &inner.plans, &mut meters)?;
        drop(meters);
        let n = table.by_id.len();
        let generation = table.generation;
        inner.table.store(Arc::new(table));
        // After the swap: a cache that sees this generation finds its table in force.
        inner.generation.store(generation, Ordering::Release);
        Ok(n)
    }

    /// Persists all usage now (embedded store) and hands unused Redis leases back, then
    /// returns. The background task does the same once a second.
    pub async fn sync(&self) -> Result<(), AccessError> {
        sync_once(&self.inner, true).await
    }

    /// Persists all usage (clean shutdown) and stops the background task.
    pub async fn shutdown(&self) -> Result<(), AccessError> {
        let _ = self.stop.send(true);
        sync_once(&self.inner, true).await?;
        if let Some(j) = &self.inner.journal {
            j.mark_clean().map_err(|e| AccessError::Io {
                path: j.path().to_path_buf(),
                action: "mark the credit journal clean",
                source: e,
            })?;
        }
        Ok(())
    }

    /// This process's field in the usage store's credit hashes (`tldsnap:credits:…`),
    /// when credits are kept in Redis: what an operator reads per replica there.
    pub fn usage_store_replica(&self) -> Option<&str> {
        self.inner.remote.as_ref().map(|r| r.replica_id())
    }

    /// Whether the shared usage store (Redis) is configured and currently reachable.
    pub fn usage_store_healthy(&self) -> Option<bool> {
        self.inner.remote.as_ref().map(|r| r.healthy())
    }
}

impl Drop for Access {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

fn prefix(d: &[u8; 32]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// Whole seconds (rounded up, at least 1) from `now_ms` until the next UTC midnight.
pub fn secs_until_next_day(now_ms: i64) -> u64 {
    let day = crate::time::MS_PER_DAY;
    let ms = (day - now_ms.rem_euclid(day)) as u64;
    ms.div_ceil(1000).max(1)
}

fn meter_for(meters: &Mutex<ahash::AHashMap<Arc<str>, Arc<Meter>>>, id: &str) -> Arc<Meter> {
    let mut m = lock(meters);
    if let Some(x) = m.get(id) {
        return x.clone();
    }
    let x = Arc::new(Meter::default());
    m.insert(Arc::from(id), x.clone());
    x
}

fn build_table(
    file: &KeysFile,
    plans: &Plans,
    meters: &mut ahash::AHashMap<Arc<str>, Arc<Meter>>,
) -> Result<KeyTable, AccessError> {
    let mut t = KeyTable {
        generation: TABLE_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        ..KeyTable::default()
    };
    let mut by_digest = Vec::with_capacity(file.keys.len());
    for rec in &file.keys {
        // KeysFile::load checked digests and plans; re-check so no path can panic.
        let (Ok(digest), Some(plan)) = (rec.digest(), plans.get(&rec.plan)) else {
            continue;
        };
        let id: Arc<str> = Arc::from(rec.id.as_str());
        let meter = meters
            .entry(id.clone())
            .or_insert_with(|| Arc::new(Meter::default()))
            .clone();
        let e = Arc::new(KeyEntry {
            id: id.clone(),
            plan: plan.clone(),
            digest,
            meter,
        });
        by_digest.push(e.clone());
        t.by_id.insert(id, e);
    }
    t.by_digest = DigestIndex::new(by_digest);
    Ok(t)
}

/// The once-a-second task: persist (embedded) or reconcile (Redis). It holds only a weak
/// reference, so dropping the `Access` ends it.
async fn background(inner: Weak<Inner>, mut stopped: tokio::sync::watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(FLUSH_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.changed() => return,
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(e) = sync_once(&inner, false).await {
            eprintln!("tldsnap: metering: {e}");
        }
    }
}

async fn sync_once(inner: &Arc<Inner>, final_sync: bool) -> Result<(), AccessError> {
    if inner.usage.is_some() {
        // The picture of every key's count, its encoding and the write run on a blocking
        // thread: with 10,000 keys they are milliseconds of work, which on the serving
        // thread stalled every connection once a second.
        let me = Arc::clone(inner);
        match crate::blocking::run(move || persist_usage(&me)).await {
            Ok(r) => r?,
            Err(panic) => {
                return Err(AccessError::UsageFile {
                    path: path_of(inner),
                    message: format!(
                        "the writer panicked: {}",
                        crate::blocking::panic_message(&*panic)
                    ),
                });
            }
        }
    }
    if let Some(r) = &inner.remote {
        let meters: Vec<(Arc<str>, Arc<Meter>)> = lock(&inner.meters)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        r.sync(&meters, inner.clock.now_ms(), final_sync).await;
        if let Some(j) = &inner.journal {
            if j.pending().await > 0 {
                j.hand_back(r, inner.clock.now_ms()).await;
            }
            let j = Arc::clone(j);
            match crate::blocking::run(move || j.flush()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    eprintln!("tldsnap: usage store: cannot flush the credit journal: {e}")
                }
                Err(panic) => eprintln!(
                    "tldsnap: usage store: the journal flush panicked: {}",
                    crate::blocking::panic_message(&*panic)
                ),
            }
        }
    }
    Ok(())
}

/// Writes every key's count for its month to the usage file, when it differs from what
/// was last written (blocking: the caller runs it on a blocking thread).
fn persist_usage(inner: &Inner) -> Result<(), AccessError> {
    let Some((path, last)) = &inner.usage else {
        return Ok(());
    };
    let mut last = lock(last);
    let mut counts: Vec<(Arc<str>, u32, u64)> = lock(&inner.meters)
        .iter()
        .filter_map(|(id, m)| {
            let (month, used) = m.used.raw();
            (used > 0).then(|| (Arc::clone(id), month, used))
        })
        .collect();
    let bytes = usage::encode_counts(&mut counts);
    if bytes != *last {
        usage::write(path, &bytes)?;
        *last = bytes;
    }
    Ok(())
}

fn path_of(inner: &Inner) -> PathBuf {
    inner
        .usage
        .as_ref()
        .map(|(p, _)| p.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(digest: [u8; 32], id: &str) -> Arc<KeyEntry> {
        Arc::new(KeyEntry {
            id: Arc::from(id),
            plan: Plans::default().get("pro").expect("a default plan").clone(),
            digest,
            meter: Arc::default(),
        })
    }

    #[test]
    fn the_digest_index_finds_every_key_and_no_other() {
        assert!(DigestIndex::default().get(&[0; 32]).is_none());
        assert!(DigestIndex::new(Vec::new()).get(&[0; 32]).is_none());
        for n in [1usize, 7, 8, 100, 1_000, 10_000] {
            let digests: Vec<[u8; 32]> = (0..n)
                .map(|i| keys::hash_key(format!("key {i}").as_bytes()))
                .collect();
            let index = DigestIndex::new(
                digests
                    .iter()
                    .enumerate()
                    .map(|(i, d)| entry(*d, &i.to_string()))
                    .collect(),
            );
            assert!(
                index.slots.len() * 7 >= n * 10,
                "{n} keys in {} slots",
                index.slots.len()
            );
            for (i, d) in digests.iter().enumerate() {
                assert_eq!(&*index.get(d).expect("listed").id, i.to_string().as_str());
            }
            for i in 0..1_000 {
                assert!(
                    index
                        .get(&keys::hash_key(format!("other {i}").as_bytes()))
                        .is_none()
                );
            }
        }
        // Clustered first slots (equal prefixes, other digests) are probed past.
        let mut a = [7u8; 32];
        let mut b = a;
        b[31] = 8;
        let index = DigestIndex::new(vec![entry(a, "a"), entry(b, "b")]);
        assert_eq!(&*index.get(&a).unwrap().id, "a");
        assert_eq!(&*index.get(&b).unwrap().id, "b");
        a[30] = 0;
        assert!(index.get(&a).is_none());
    }

    #[test]
    fn a_digest_listed_twice_keeps_the_later_entry() {
        let d = keys::hash_key(b"twice");
        let index = DigestIndex::new(vec![entry(d, "first"), entry(d, "second")]);
        assert_eq!(&*index.get(&d).unwrap().id, "second");
        assert_eq!(index.slots.iter().filter(|s| s.entry.is_some()).count(), 1);
    }
}
