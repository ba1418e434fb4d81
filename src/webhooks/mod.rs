//! Webhooks: price-change events POSTed to subscribers' URLs, signed the Standard
//! Webhooks way, delivered at least once, in order, through restarts and crashes.
//!
//! ```text
//!  EventLog (durable, ids 1, 2, 3, …) ──read after cursor──▶ worker (one per subscription)
//!                                                             ├─ filter: skip, cursor moves
//!                                                             ├─ sign (webhook-id/-timestamp/-signature)
//!                                                             ├─ Sender::post through net::Guard (+ rustls)
//!                                                             ├─ 2xx: cursor = event id, saved
//!                                                             ├─ 410: subscription removed
//!                                                             └─ else: retry per schedule; last one fails: disabled
//!  webhooks/wh_….json (one file per subscription, replaced atomically at every change)
//! ```
//!
//! **The outbox is the event log.** Every event is in the fsynced log before any
//! channel can see it; a subscription's file says how far its deliveries got (the
//! `cursor`: the last event id delivered or filtered out) and the attempts at the next
//! one. The cursor moves past an event only after a 2xx, and is recorded (a synced
//! append to the subscription's [`journal`]; the file itself is replaced at every other
//! change) before the next event is sent. So a `kill -9` at any moment
//! loses nothing and at worst sends the event in flight again, with the same
//! `webhook-id` (made from the event id and its swap time). Retries keep their place in
//! the schedule across restarts (the attempt count and the next due time are in the
//! file). Events wait for a paused or disabled subscription as long as the log keeps
//! them (`--event-retention-days`).
//!
//! **Order.** One worker per subscription sends one message at a time, in event id
//! order; an event is not sent before the one before it was delivered (or the
//! subscription was re-enabled after giving up on it: it is then retried first).
//!
//! `docs/EVENTS.md` documents payloads, headers, retries, and how a receiver verifies.
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`sign`] | `whsec_` secrets and `v1,` signatures |
//! | [`send`] | one POST: guard, TLS, 10 s, 64 KiB, no redirects |
//! | [`subscription`] | the subscription file and its JSON |
//! | [`journal`] | the delivery journal: one synced 24-byte record per delivered event |
//! | [`worker`] | the delivery loop, the retry schedule |

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use url::Url;

// A poisoned lock only means a panic elsewhere; every update leaves the state whole.
use crate::access::clock::Clock;
use crate::events::EventLog;
use crate::files::{self, Mode};
use crate::lock;

pub mod journal;
pub mod send;
pub mod sign;
pub mod subscription;
pub mod worker;

pub use send::{Outcome, Sender};
pub use sign::Secret;
pub use subscription::{Attempt, Status, Subscription};
pub use worker::{DEFAULT_SCHEDULE, parse_schedule};

/// The directory inside the data directory.
pub const DIR_NAME: &str = "webhooks";
/// Longest URL taken.
pub const MAX_URL_LEN: usize = 2048;
/// Longest description taken, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// How long the secret before a rotation keeps signing: a receiver has a day to switch.
pub const ROTATION_GRACE_MS: i64 = 24 * 3_600_000;

/// Whether an API key may (still) have webhooks delivered: `Err(reason)` disables its
/// subscriptions (a revoked key, a plan without webhooks).
pub type OwnerCheck = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// How the webhooks of a data directory are run.
#[derive(Clone)]
pub struct Config {
    /// The data directory (subscriptions go to `DIR/webhooks/`).
    pub data_dir: PathBuf,
    /// Sends the POSTs (decides whether private targets and `http://` are allowed).
    pub sender: Sender,
    /// Delay before each attempt at a message: the first is usually 0 (at once).
    pub schedule: Vec<Duration>,
    /// Whether a subscription's owner may receive.
    pub owner_check: OwnerCheck,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("data_dir", &self.data_dir)
            .field("sender", &self.sender)
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

/// Why a webhook call could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookError {
    /// No subscription of this owner has this id.
    NotFound,
    /// The URL is refused (why).
    Url(String),
    /// The owner has as many subscriptions as its plan allows.
    Limit(u32),
    /// A value is not valid (why).
    Invalid(String),
    /// The subscription could not be written (why).
    Io(String),
    /// A test message to this subscription is being sent; the seconds until it has
    /// ended at the latest (one attempt's deadline).
    TestInFlight(u64),
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebhookError::NotFound => f.write_str("no such webhook"),
            WebhookError::Url(why) => write!(f, "url refused: {why}"),
            WebhookError::Limit(n) => write!(f, "at most {n} webhooks"),
            WebhookError::Invalid(why) => f.write_str(why),
            WebhookError::Io(why) => write!(f, "webhook not saved: {why}"),
            WebhookError::TestInFlight(secs) => {
                write!(f, "a test is being sent; retry within {secs} s")
            }
        }
    }
}

impl std::error::Error for WebhookError {}

/// What a new subscription asks for (filters already checked and canonical).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSubscription {
    /// Where to POST.
    pub url: String,
    /// Free text.
    pub description: String,
    /// Canonical TLDs; empty: all.
    pub tlds: Vec<String>,
    /// Registrar keys; empty: all.
    pub registrars: Vec<String>,
    /// Event types; empty: all.
    pub types: Vec<String>,
}

/// A change to a subscription; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// A new URL (attempts at the pending event start again).
    pub url: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// New TLDs.
    pub tlds: Option<Vec<String>>,
    /// New registrars.
    pub registrars: Option<Vec<String>>,
    /// New types.
    pub types: Option<Vec<String>>,
    /// `Active` (resume, also after being disabled) or `Paused`.
    pub status: Option<Status>,
}

/// One subscription in memory: its state, and what its worker waits on.
struct Entry {
    state: Mutex<Subscription>,
    /// Serialises file writes (each writes the state as it is then); holds the delivery
    /// journal once a delivery opened it.
    file: Mutex<Option<journal::Journal>>,
    /// One attempt at a time to the endpoint (the worker's and test messages).
    sending: tokio::sync::Mutex<()>,
    /// A test message is being sent ([`Webhooks::begin_test`]): one at a time, the
    /// next refused at once instead of queued behind it.
    testing: AtomicBool,
    /// The subscriber changed something: the worker looks again.
    changed: Notify,
    removed: AtomicBool,
}

/// A test message to one subscription, not sent yet ([`Webhooks::begin_test`]): while
/// it lives, no other test of that subscription starts.
pub struct Test {
    entry: Arc<Entry>,
}

impl fmt::Debug for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Test").finish_non_exhaustive()
    }
}

impl Test {
    /// Sends it, after any attempt in flight; records and returns the attempt.
    pub async fn send(self, hooks: &Webhooks) -> Attempt {
        worker::send_test(hooks, &self.entry).await
    }
}

impl Drop for Test {
    fn drop(&mut self) {
        self.entry.testing.store(false, Ordering::Release);
    }
}

/// The webhooks of one data directory: subscriptions, their files, their workers.
pub struct Webhooks {
    config: Config,
    dir: PathBuf,
    log: Arc<EventLog>,
    clock: Arc<dyn Clock>,
    entries: Mutex<BTreeMap<String, Arc<Entry>>>,
    closing: watch::Sender<bool>,
    workers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Attempts since start by [`worker::RESULTS`].
    attempts: [std::sync::atomic::AtomicU64; 5],
}

impl fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhooks")
            .field("dir", &self.dir)
            .field("subscriptions", &lock(&self.entries).len())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// Reads every subscription of `DATA_DIR/webhooks/` (creating it, owner-only);
    /// removes temporary files a crash left. Workers start with [`Webhooks::start`].
    pub fn open(
        config: Config,
        log: Arc<EventLog>,
        clock: Arc<dyn Clock>,
    ) -> Result<Webhooks, String> {
        let dir = config.data_dir.join(DIR_NAME);
        files::create_dir(&dir, Mode::Private).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut entries = BTreeMap::new();
        let listing = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for item in listing {
            let item = item.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.contains(".tmp-") {
                let _ = std::fs::remove_file(item.path());
                continue;
            }
            if let Some(id) = name.strip_suffix(".journal") {
                // The journal of a deleted subscription: nothing to deliver for.
                if subscription::is_id(id) && !dir.join(format!("{id}.json")).exists() {
                    let _ = std::fs::remove_file(item.path());
                }
                continue;
            }
            let Some(id) = name.strip_suffix(".json") else {
                continue;
            };
            if !subscription::is_id(id) {
                continue;
            }
            let mut sub = Subscription::read(&item.path())?;
            // Deliveries since the file was last replaced are in the journal.
            let journal = dir.join(format!("{id}.journal"));
            let progress = journal::Journal::read(&journal)
                .map_err(|e| format!("{}: {e}", journal.display()))?;
            if let Some(p) = progress
                && p.cursor > sub.cursor
            {
                sub.cursor = p.cursor;
                sub.delivered = sub.delivered.max(p.delivered);
                if sub.pending_event.is_some_and(|e| e <= p.cursor) {
                    sub.reset_attempts();
                }
            }
            if sub.id != id {
                return Err(format!(
                    "{}: holds subscription {}, not {id}",
                    item.path().display(),
                    sub.id
                ));
            }
            entries.insert(sub.id.clone(), Arc::new(Entry::new(sub)));
        }
        Ok(Webhooks {
            config,
            dir,
            log,
            clock,
            entries: Mutex::new(entries),
            closing: watch::Sender::new(false),
            workers: Mutex::new(Vec::new()),
            attempts: Default::default(),
        })
    }

    /// Starts one delivery worker per subscription (and later one per new one).
    pub fn start(self: &Arc<Self>) {
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        for entry in entries {
            self.spawn(entry);
        }
    }

    fn spawn(self: &Arc<Self>, entry: Arc<Entry>) {
        if *self.closing.borrow() {
            return;
        }
        let handle = tokio::spawn(worker::run(Arc::clone(self), entry));
        let mut workers = lock(&self.workers);
        workers.retain(|h| !h.is_finished());
        workers.push(handle);
    }

    /// Stops every worker: an attempt in flight is abandoned (it was not recorded, so
    /// it is made again after the restart, with the same `webhook-id`).
    pub async fn shutdown(&self) {
        self.closing.send_replace(true);
        let workers = std::mem::take(&mut *lock(&self.workers));
        for w in workers {
            let _ = w.await;
        }
        // The recent attempts of deliveries (journaled, not yet in the files) are kept.
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        for e in entries {
            let journaled = lock(&e.file).as_ref().is_some_and(|j| j.records() > 0);
            if !journaled {
                continue;
            }
            if let Err(err) = self.write(&e) {
                eprintln!("tldsnap: webhook state not saved at shutdown: {err}");
            }
        }
    }

    /// How many subscriptions exist (every owner).
    pub fn count(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Subscriptions by status (active, paused, disabled), and attempts since start by
    /// result (delivered, retrying, disabled, removed, test): for `/metrics`.
    pub fn counts(&self) -> ([u64; 3], [u64; 5]) {
        let mut by_status = [0u64; 3];
        for e in lock(&self.entries).values() {
            by_status[match lock(&e.state).status {
                Status::Active => 0,
                Status::Paused => 1,
                Status::Disabled => 2,
            }] += 1;
        }
        let attempts = std::array::from_fn(|i| self.attempts[i].load(Ordering::Relaxed));
        (by_status, attempts)
    }

    /// Counts one attempt that led to `result` (one of [`worker::RESULTS`]).
    fn count_attempt(&self, result: &str) {
        if let Some(i) = worker::RESULTS.iter().position(|r| *r == result) {
            self.attempts[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The subscriptions of `owner`, oldest first.
    pub fn list(&self, owner: &str) -> Vec<Subscription> {
        let mut subs: Vec<Subscription> = lock(&self.entries)
            .values()
            .map(|e| lock(&e.state).clone())
            .filter(|s| s.owner == owner)
            .collect();
        subs.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        subs
    }

    /// Subscription `id` of `owner` (another owner's is "not found").
    pub fn get(&self, owner: &str, id: &str) -> Result<Subscription, WebhookError> {
        Ok(lock(&self.entry(owner, id)?.state).clone())
    }

    fn entry(&self, owner: &str, id: &str) -> Result<Arc<Entry>, WebhookError> {
        let entry = lock(&self.entries)
            .get(id)
            .cloned()
            .ok_or(WebhookError::NotFound)?;
        if lock(&entry.state).owner != owner {
            return Err(WebhookError::NotFound);
        }
        Ok(entry)
    }

    /// Checks a URL: its form, the sender's rules (scheme, host), and — when the name
    /// resolves now — every address it resolves to. Returns it normalised.
    pub async fn check_url(&self, url: &str) -> Result<String, WebhookError> {
        if url.len() > MAX_URL_LEN {
            return Err(WebhookError::Url(format!(
                "longer than {MAX_URL_LEN} bytes"
            )));
        }
        // URL parsers drop blanks and control characters around and inside a URL: what
        // is stored must be what was sent, so they are refused instead.
        if !url.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(WebhookError::Url(
                "must be printable ASCII without blanks (an IDN host in its xn-- form, \
                 anything else percent-encoded)"
                    .to_owned(),
            ));
        }
        let parsed = Url::parse(url).map_err(|e| WebhookError::Url(format!("not a URL: {e}")))?;
        let sender = &self.config.sender;
        sender.check_url(&parsed).map_err(WebhookError::Url)?;
        let host = parsed.host_str().unwrap_or_default();
        let port = parsed.port_or_known_default().unwrap_or(443);
        let guard = crate::net::Guard {
            allow_private: sender.allows_private(),
            timeout: Duration::from_secs(5),
        };
        // A name that does not resolve yet is taken (its DNS may come later); one
        // that resolves to a refused address is not. Every delivery checks again.
        match guard.resolve(host, port).await {
            Err(e) if e.is_refusal() => Err(WebhookError::Url(e.to_string())),
            _ => Ok(parsed.to_string()),
        }
    }

    /// Creates a subscription for `owner` (at most `limit` per owner; `None`:
    /// unlimited). Its deliveries start with the next event recorded.
    pub async fn create(
        self: &Arc<Self>,
        owner: &str,
        new: NewSubscription,
        limit: Option<u32>,
    ) -> Result<Subscription, WebhookError> {
        check_description(&new.description)?;
        let url = self.check_url(&new.url).await?;
        let io = |e: getrandom::Error| WebhookError::Io(e.to_string());
        let now = self.clock.now_ms();
        let sub = Subscription {
            id: subscription::new_id().map_err(io)?,
            owner: owner.to_owned(),
            url,
            description: new.description,
            tlds: new.tlds,
            registrars: new.registrars,
            types: new.types,
            status: Status::Active,
            disabled_reason: None,
            created_ms: now,
            updated_ms: now,
            secret: Secret::generate().map_err(io)?.to_text(),
            previous_secret: None,
            previous_until_ms: None,
            cursor: self.log.last_id(),
            pending_event: None,
            attempts: 0,
            next_attempt_ms: None,
            failing_since_ms: None,
            delivered: 0,
            recent: Default::default(),
        };
        let entry = Arc::new(Entry::new(sub.clone()));
        {
            // The count and the insert under one lock: two concurrent creations cannot
            // both take the last place.
            let mut entries = lock(&self.entries);
            if let Some(limit) = limit {
                let owned = entries
                    .values()
                    .filter(|e| lock(&e.state).owner == owner)
                    .count();
                if owned >= limit as usize {
                    return Err(WebhookError::Limit(limit));
                }
            }
            self.write(&entry)?;
            entries.insert(sub.id.clone(), Arc::clone(&entry));
        }
        self.spawn(entry);
        Ok(sub)
    }

    /// Applies `patch` to subscription `id` of `owner`.
    pub async fn update(
        &self,
        owner: &str,
        id: &str,
        patch: Patch,
    ) -> Result<Subscription, WebhookError> {
        let entry = self.entry(owner, id)?;
        if let Some(d) = &patch.description {
            check_description(d)?;
        }
        let url = match &patch.url {
            Some(url) => Some(self.check_url(url).await?),
            None => None,
        };
        let now = self.clock.now_ms();
        let (before, updated) = {
            let mut s = lock(&entry.state);
            let before = s.clone();
            if let Some(url) = url
                && url != s.url
            {
                s.url = url;
                s.reset_attempts();
            }
            if let Some(d) = patch.description {
                s.description = d;
            }
            if let Some(t) = patch.tlds {
                s.tlds = t;
            }
            if let Some(r) = patch.registrars {
                s.registrars = r;
            }
            if let Some(t) = patch.types {
                s.types = t;
            }
            match patch.status {
                Some(Status::Active) if s.status != Status::Active => {
                    s.status = Status::Active;
                    s.disabled_reason = None;
                    s.reset_attempts();
                }
                Some(Status::Paused) => s.status = Status::Paused,
                Some(Status::Disabled) => {
                    return Err(WebhookError::Invalid(
                        "status may be set to active or paused".to_owned(),
                    ));
                }
                _ => {}
            }
            s.updated_ms = now;
            (before, s.clone())
        };
        self.write_or_restore(&entry, &before)?;
        entry.changed.notify_one();
        Ok(updated)
    }

    /// Deletes subscription `id` of `owner`: its file is removed, its worker stops
    /// (after an attempt in flight).
    pub fn delete(&self, owner: &str, id: &str) -> Result<(), WebhookError> {
        let entry = self.entry(owner, id)?;
        self.remove(id, &entry)
    }

    fn remove(&self, id: &str, entry: &Entry) -> Result<(), WebhookError> {
        let mut journal = lock(&entry.file);
        files::remove_durably(&self.path_of(id)).map_err(|e| WebhookError::Io(e.to_string()))?;
        entry.removed.store(true, Ordering::SeqCst);
        // Without its file, a journal is ignored (and removed at the next start).
        journal.take();
        let _ = std::fs::remove_file(self.journal_of(id));
        lock(&self.entries).remove(id);
        entry.changed.notify_one();
        Ok(())
    }

    /// A new signing secret for subscription `id`; the old one keeps signing for
    /// [`ROTATION_GRACE_MS`]. Returns the subscription and the new secret.
    pub fn rotate_secret(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<(Subscription, String), WebhookError> {
        let entry = self.entry(owner, id)?;
        let secret = Secret::generate()
            .map_err(|e| WebhookError::Io(e.to_string()))?
            .to_text();
        let now = self.clock.now_ms();
        let (before, updated) = {
            let mut s = lock(&entry.state);
            let before = s.clone();
            s.previous_secret = Some(std::mem::replace(&mut s.secret, secret.clone()));
            s.previous_until_ms = Some(now + ROTATION_GRACE_MS);
            s.updated_ms = now;
            (before, s.clone())
        };
        self.write_or_restore(&entry, &before)?;
        Ok((updated, secret))
    }

    /// The right to send subscription `id` a `webhook.test` message now (whatever its
    /// status), held until the returned [`Test`] is sent ([`Test::send`]) or dropped;
    /// [`WebhookError::TestInFlight`] at once while another test of it is held, instead
    /// of a wait behind it. Dropping the future of [`Test::send`] (its client left)
    /// cancels the attempt, and the next test may start.
    pub fn begin_test(&self, owner: &str, id: &str) -> Result<Test, WebhookError> {
        let entry = self.entry(owner, id)?;
        if entry.testing.swap(true, Ordering::AcqRel) {
            let secs = self.config.sender.timeout().as_secs_f64().ceil() as u64;
            return Err(WebhookError::TestInFlight(secs.max(1)));
        }
        Ok(Test { entry })
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn journal_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.journal"))
    }

    /// Writes the entry's file with its state as it is now (nothing once removed), then
    /// empties its journal (the file holds its progress now).
    fn write(&self, entry: &Entry) -> Result<(), WebhookError> {
        let mut journal = lock(&entry.file);
        if entry.removed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let (id, bytes) = {
            let s = lock(&entry.state);
            (s.id.clone(), s.to_file_bytes())
        };
        let io = |e: std::io::Error| WebhookError::Io(e.to_string());
        files::write_atomic_mode(&self.path_of(&id), &bytes, Mode::Private).map_err(io)?;
        match journal.as_mut() {
            Some(j) => j.clear().map_err(io),
            // A journal left from before a restart: its records are in the file now.
            None => match std::fs::remove_file(self.journal_of(&id)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
                _ => Ok(()),
            },
        }
    }

    /// Records a delivery (the cursor moved): one synced journal record; every
    /// [`journal::COMPACT_AFTER`] of them, the file is replaced instead.
    fn advance(&self, entry: &Entry) -> Result<(), WebhookError> {
        let io = |e: std::io::Error| WebhookError::Io(e.to_string());
        let compact = {
            let mut journal = lock(&entry.file);
            if entry.removed.load(Ordering::SeqCst) {
                return Ok(());
            }
            let (id, progress) = {
                let s = lock(&entry.state);
                let p = journal::Progress {
                    cursor: s.cursor,
                    delivered: s.delivered,
                };
                (s.id.clone(), p)
            };
            if journal.is_none() {
                *journal = Some(journal::Journal::open(&self.journal_of(&id)).map_err(io)?.0);
            }
            let j = journal.as_mut().expect("just opened");
            j.append(progress).map_err(io)?;
            j.records() >= journal::COMPACT_AFTER
        };
        if compact {
            self.write(entry)?;
        }
        Ok(())
    }

    /// Writes the entry's file after a change by the subscriber; when that fails, puts
    /// the subscriber's settings back as they were in `before` (the delivery state,
    /// which the worker may have moved meanwhile, is kept), so "not saved" means
    /// nothing changed.
    fn write_or_restore(&self, entry: &Entry, before: &Subscription) -> Result<(), WebhookError> {
        let written = self.write(entry);
        if written.is_err() {
            let mut s = lock(&entry.state);
            let settings = Subscription {
                cursor: s.cursor,
                pending_event: s.pending_event,
                attempts: s.attempts,
                next_attempt_ms: s.next_attempt_ms,
                failing_since_ms: s.failing_since_ms,
                delivered: s.delivered,
                recent: std::mem::take(&mut s.recent),
                ..before.clone()
            };
            *s = settings;
        }
        written
    }

    /// The directory of the subscription files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Entry {
    fn new(sub: Subscription) -> Entry {
        Entry {
            state: Mutex::new(sub),
            file: Mutex::new(None),
            sending: tokio::sync::Mutex::new(()),
            testing: AtomicBool::new(false),
            changed: Notify::new(),
            removed: AtomicBool::new(false),
        }
    }
}

fn check_description(d: &str) -> Result<(), WebhookError> {
    if d.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(WebhookError::Invalid(format!(
            "description is longer than {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    if d.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(WebhookError::Invalid(
            "description holds control characters".to_owned(),
        ));
    }
    Ok(())
}
