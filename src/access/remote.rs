//! Credits shared by several replicas through Redis, with the `redis` crate (redis-rs):
//! one multiplexed connection that pipelines every caller's commands, and two Lua
//! scripts run by `EVALSHA` (loaded at connect; `redis::Script` loads a script again
//! and retries when Redis forgot it).
//!
//! # The data in Redis
//!
//! One hash per key and month, `tldsnap:credits:{YYYY-MM}:{key id}`, with one field per
//! replica process (a random id chosen at start). A replica's field holds everything that
//! replica has *claimed* this month: the credits it spent plus the credits it holds as an
//! unspent lease. The key's usage is the sum of the fields. Only the replica that owns a
//! field writes it, always as an absolute value computed from its own state, so a retried
//! or repeated write can never count a request twice.
//!
//! # Leases
//!
//! Asking Redis on every request would put a network round trip on every request. A
//! replica instead claims a block of credits at once (the [`GRAB`] script checks the sum
//! against the plan and raises the replica's field atomically) and then spends the block
//! locally with a compare-and-swap. The block is a thousandth of what is left (at least 1,
//! at most 1,000), so credits held unspent by other replicas when a key runs out are at
//! most 0.1% of the plan per replica; leases left idle for two seconds, and all leases at
//! shutdown, are handed back ([`SET`]). Never more successes than credits: a credit is
//! only spent after Redis granted it.
//!
//! # When Redis goes away
//!
//! A failed or timed-out call marks the connection down; requests keep being served on
//! local counts: the last total Redis reported plus what this replica spent since, against
//! the plan's limit. A background task reconnects once a second and writes each field's
//! true absolute value back (the grab script also takes `max(field in Redis, our value)`,
//! which repairs a Redis restarted without its data). During an outage each replica
//! enforces the limit on its own, so N replicas may together serve up to N times the
//! credits that were left when Redis went away; after the reconciliation the key shows
//! its true usage, possibly above the plan, and is refused until the month turns.
//!
//! # Addresses in logs
//!
//! The address may hold a password (`redis://user:password@host`). Every log line and
//! error shows it through [`redact`] (`redis://user:***@host`), never as given.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Script};

use super::month::{MAX_COUNT, MonthCounter, month_label, month_of};
use super::{AccessError, Meter};

/// Longest wait for one Redis reply before the connection is declared down.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(500);
/// Longest wait to open a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// A lease unused this long is handed back, so other replicas can spend it.
pub const IDLE_LEASE_MS: i64 = 2_000;
/// Hashes expire this long after their last write (the month plus a margin for `keys list`).
const TTL_SECS: u64 = 100 * 86_400;
/// Limit used for plans without a credit limit (their usage is still counted).
const UNLIMITED: u64 = 1 << 50;

/// Claims up to `want` credits for this replica's field if the key's total allows it.
/// `KEYS[1]`: the month hash; ARGV: field, base (the value this replica believes its field
/// holds), want, limit, ttl. Returns {new field value, new total}.
/// `max(cur, base)`: `cur > base` when an earlier grab was applied but its reply was
/// lost (the replica adopts it); `cur < base` when Redis lost data (the replica restores
/// what it really spent).
pub const GRAB: &str = r#"
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local base = tonumber(ARGV[2])
local total = 0
local vals = redis.call('HVALS', KEYS[1])
for i = 1, #vals do total = total + tonumber(vals[i]) end
if base > cur then total = total + (base - cur) else base = cur end
local want = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local grant = 0
if total < limit then grant = math.min(want, limit - total) end
local newv = base + grant
-- '%d': Lua would write numbers from 1e14 up in exponent form.
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', newv))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return {newv, total + grant}
"#;

/// Sets this replica's field to an absolute value (hand back a lease, reconcile).
/// `KEYS[1]`: the month hash; ARGV: field, value, ttl. Returns the new total.
pub const SET: &str = r#"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
local total = 0
local vals = redis.call('HVALS', KEYS[1])
for i = 1, #vals do total = total + tonumber(vals[i]) end
return total
"#;

/// Per-key lease state of this replica.
#[derive(Debug, Default)]
pub struct Lease {
    /// Credits claimed in Redis and not yet spent.
    lease: MonthCounter,
    /// The key's total (all replicas) as Redis last reported it.
    total: MonthCounter,
    /// Credits spent while Redis was unreachable and not yet written back.
    unsynced: MonthCounter,
    /// Clock time of the last spend from the lease.
    last_use_ms: AtomicI64,
    /// Serialises this key's conversations with Redis (never held by other keys).
    gate: tokio::sync::Mutex<Gate>,
}

#[derive(Debug, Default)]
struct Gate {
    month: u32,
    /// The value this replica's field should hold: spent + lease this month.
    field: u64,
}

impl Lease {
    /// Credits used this month as this replica sees them: the last total from Redis
    /// (less its own unspent lease) plus spending not yet written back.
    pub fn used_estimate(&self, month: u32) -> u64 {
        self.total
            .get(month)
            .saturating_sub(self.lease.get(month))
            .saturating_add(self.unsynced.get(month))
    }
}

/// The address with its password replaced by `***` (`redis://user:***@host:6379/0`):
/// the one form in which a usage store address is logged or shown in an error. Works on
/// any text, parsable or not: whatever stands between `://` and the last `@` is the
/// user information, and everything after its first `:` is hidden.
pub fn redact(url: &str) -> String {
    let rest_at = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[rest_at..];
    let Some(at) = rest.rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) => format!("{}{}:***{}", &url[..rest_at], &rest[..colon], &rest[at..]),
        None => url.to_owned(),
    }
}

/// Parses `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` (port 6379 and database 0 by
/// default; user and password percent-encoded, as in any URL) with the `redis` crate.
/// Only plain TCP addresses are accepted. Errors never repeat the address.
pub fn parse_url(url: &str) -> Result<ConnectionInfo, String> {
    const FORM: &str = "the usage store must be a redis://HOST:PORT address";
    if !url.starts_with("redis://") {
        return Err(FORM.into());
    }
    let info = url.into_connection_info().map_err(|e| e.to_string())?;
    match info.addr() {
        ConnectionAddr::Tcp(..) => Ok(info),
        _ => Err(FORM.into()),
    }
}

/// One multiplexed connection: clones share it, and the commands of concurrent callers
/// are pipelined on it (Redis answers in order; the crate matches the replies).
struct Conn {
    con: MultiplexedConnection,
    /// Set when the task that drives the socket ends: Redis closed the connection or it
    /// failed. The connection is then useless even if no call has failed yet.
    closed: Arc<AtomicBool>,
}

/// The shared usage store.
pub struct Remote {
    /// The address as logged: [`redact`]ed.
    url: String,
    info: ConnectionInfo,
    replica: String,
    conn: ArcSwapOption<Conn>,
    connecting: tokio::sync::Mutex<()>,
    grab: Script,
    set: Script,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.url)
            .field("replica", &self.replica)
            .finish()
    }
}

fn hash_key(month: u32, id: &str) -> String {
    format!("tldsnap:credits:{}:{id}", month_label(month))
}

impl Remote {
    /// Checks the address and tries to connect once. An unreachable Redis is logged, not
    /// an error: the service runs on local counts until Redis answers.
    pub async fn new(url: &str) -> Result<Remote, AccessError> {
        let shown = redact(url);
        let info = parse_url(url).map_err(|message| AccessError::UsageStore {
            url: shown.clone(),
            message,
        })?;
        let mut id = [0u8; 8];
        getrandom::fill(&mut id).map_err(|e| AccessError::Random(e.to_string()))?;
        let r = Remote {
            url: shown,
            info,
            replica: super::keys::to_hex(&id),
            conn: ArcSwapOption::empty(),
            connecting: tokio::sync::Mutex::new(()),
            grab: Script::new(GRAB),
            set: Script::new(SET),
        };
        if let Err(e) = r.connect().await {
            eprintln!(
                "tldsnap: usage store {} is unreachable ({e}); serving on local counts until it answers",
                r.url
            );
        }
        Ok(r)
    }

    /// This replica's field name in the month hashes.
    pub fn replica_id(&self) -> &str {
        &self.replica
    }

    /// Whether a connection is up.
    pub fn healthy(&self) -> bool {
        self.conn
            .load()
            .as_ref()
            .is_some_and(|c| !c.closed.load(Ordering::Acquire))
    }

    /// Opens a connection (the socket within [`CONNECT_TIMEOUT`], then `AUTH`, `SELECT`
    /// and loading both scripts within [`CALL_TIMEOUT`] each) unless one is up.
    async fn connect(&self) -> Result<(), String> {
        let _one = self.connecting.lock().await;
        if self.healthy() {
            return Ok(());
        }
        let ConnectionAddr::Tcp(host, port) = self.info.addr() else {
            return Err("not a TCP address".into());
        };
        let stream = tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::TcpStream::connect((host.as_str(), *port)),
        )
        .await
        .map_err(|_| "connection timed out".to_string())?
        .map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        // The socket is opened here, not by `redis::Client`, to drive the connection on a
        // task of our own: its end is how a closed connection is noticed between calls.
        // Every call is bounded by `timed` (a script's EVALSHA, SCRIPT LOAD and EVALSHA
        // together), so the crate's own timeout per command would be a second timer.
        let config = AsyncConnectionConfig::new().set_response_timeout(None);
        let (mut con, driver) = tokio::time::timeout(
            CALL_TIMEOUT,
            MultiplexedConnection::new_with_config(self.info.redis_settings(), stream, config),
        )
        .await
        .map_err(|_| "no reply in time".to_string())?
        .map_err(|e| e.to_string())?;
        let closed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closed);
        tokio::spawn(async move {
            driver.await;
            flag.store(true, Ordering::Release);
        });
        for script in [&self.grab, &self.set] {
            timed(script.prepare_invoke().load_async(&mut con)).await?;
        }
        self.conn.store(Some(Arc::new(Conn { con, closed })));
        Ok(())
    }

    fn down(&self, why: &str) {
        if self.conn.swap(None).is_some() {
            eprintln!(
                "tldsnap: usage store {} went away ({why}); serving on local counts",
                self.url
            );
        }
    }

    /// Runs a script (`EVALSHA`; `SCRIPT LOAD` and again if Redis forgot it) on the
    /// current connection, within [`CALL_TIMEOUT`] in all; any failure marks the
    /// connection down.
    async fn invoke<T: redis::FromRedisValue>(
        &self,
        call: redis::ScriptInvocation<'_>,
    ) -> Result<T, String> {
        let Some(conn) = self.conn.load_full() else {
            return Err("not connected".into());
        };
        let mut con = conn.con.clone();
        let r = timed(call.invoke_async(&mut con)).await;
        if let Err(e) = &r {
            self.down(e);
        }
        r
    }

    async fn grab(
        &self,
        id: &str,
        month: u32,
        base: u64,
        want: u64,
        limit: u64,
    ) -> Result<(u64, u64), String> {
        let mut call = self.grab.key(hash_key(month, id));
        call.arg(&self.replica)
            .arg(base)
            .arg(want)
            .arg(limit)
            .arg(TTL_SECS);
        self.invoke(call).await
    }

    async fn set(&self, id: &str, month: u32, value: u64) -> Result<u64, String> {
        self.set_field(&self.replica, id, month, value).await
    }

    /// Sets `field` of key `id`'s hash for `month` to `value` (the [`SET`] script);
    /// returns the key's new total. Besides this replica's own field, the field of an
    /// earlier run on the same data directory (`journal`: its unspent leases handed back).
    pub(crate) async fn set_field(
        &self,
        field: &str,
        id: &str,
        month: u32,
        value: u64,
    ) -> Result<u64, String> {
        let mut call = self.set.key(hash_key(month, id));
        call.arg(field).arg(value).arg(TTL_SECS);
        self.invoke(call).await
    }

    /// Takes one credit of key `id` for `month`; `Ok(remaining)` (`None` when the plan
    /// has no limit) or `Err(())` when the key's credits are spent.
    pub(crate) async fn spend(
        &self,
        id: &str,
        meter: &Meter,
        now_ms: i64,
        limit: Option<u64>,
    ) -> Result<Option<u64>, ()> {
        let month = month_of(now_ms);
        let l = meter.lease();
        let cap = limit.unwrap_or(UNLIMITED).min(UNLIMITED).min(MAX_COUNT);
        let remaining = |l: &Lease| limit.map(|lim| lim.saturating_sub(l.used_estimate(month)));
        loop {
            if l.lease.take_up_to(month, 1) == 1 {
                let _ = meter.used.try_add(month, 1, None);
                l.last_use_ms.store(now_ms, Ordering::Relaxed);
                return Ok(remaining(l));
            }
            let mut g = l.gate.lock().await;
            if g.month != month {
                // A new month: this replica has claimed nothing in its hash yet.
                *g = Gate { month, field: 0 };
            }
            if l.lease.get(month) > 0 {
                continue;
            }
            if self.healthy() {
                let avail = cap.saturating_sub(l.used_estimate(month));
                let want = (avail / 1000).clamp(1, 1000);
                match self.grab(id, month, g.field, want, cap).await {
                    Ok((field, total)) => {
                        let granted = field.saturating_sub(g.field);
                        g.field = field;
                        l.unsynced.set(month, 0);
                        l.total.set(month, total);
                        if granted == 0 {
                            return Err(());
                        }
                        let _ = l.lease.try_add(month, granted, None);
                        continue;
                    }
                    Err(_) => { /* now down: fall through to local counts */ }
                }
            }
            // Redis unreachable: enforce the limit on the last total seen plus our own.
            if l.used_estimate(month) >= cap {
                return Err(());
            }
            g.field += 1;
            let _ = l.unsynced.try_add(month, 1, None);
            let _ = meter.used.try_add(month, 1, None);
            return Ok(remaining(l));
        }
    }

    /// Background work: reconnect when down, write back what was spent during an outage,
    /// hand back idle leases (all leases when `final_sync`).
    pub(crate) async fn sync(
        &self,
        meters: &[(Arc<str>, Arc<Meter>)],
        now_ms: i64,
        final_sync: bool,
    ) {
        let mut reconnected = false;
        if !self.healthy() {
            // A connection whose driver ended (Redis closed it) is still stored until a
            // call fails; drop it so that `connect` opens a new one.
            self.down("connection closed");
            if self.connect().await.is_err() {
                return;
            }
            eprintln!("tldsnap: usage store {} is back; reconciling", self.url);
            reconnected = true;
        }
        let month = month_of(now_ms);
        for (id, meter) in meters {
            let l = meter.lease();
            let idle = now_ms - l.last_use_ms.load(Ordering::Relaxed) >= IDLE_LEASE_MS;
            let has_lease = l.lease.get(month) > 0;
            // After a reconnection every field this replica owns is written again: Redis
            // may have restarted without its data.
            let rewrite = reconnected && meter.used.get(month) > 0;
            if l.unsynced.get(month) == 0 && !(has_lease && (idle || final_sync)) && !rewrite {
                continue;
            }
            let mut g = l.gate.lock().await;
            if g.month != month {
                continue;
            }
            let returned = l.lease.take_up_to(month, u64::MAX);
            g.field = g.field.saturating_sub(returned);
            match self.set(id, month, g.field).await {
                Ok(total) => {
                    l.unsynced.set(month, 0);
                    l.total.set(month, total);
                }
                Err(_) => return,
            }
        }
    }

    /// Credits used this month by each key, summed over every replica's field.
    pub async fn totals(&self, ids: &[String], month: u32) -> Result<Vec<u64>, AccessError> {
        let err = |message: String| AccessError::UsageStore {
            url: self.url.clone(),
            message,
        };
        if !self.healthy() {
            self.connect().await.map_err(err)?;
        }
        let conn = self
            .conn
            .load_full()
            .ok_or_else(|| err("not connected".into()))?;
        let mut con = conn.con.clone();
        let mut out = Vec::with_capacity(ids.len());
        // One round trip per thousand keys: their `HVALS` pipelined.
        for chunk in ids.chunks(1000) {
            let mut pipe = redis::pipe();
            for id in chunk {
                pipe.cmd("HVALS").arg(hash_key(month, id));
            }
            let fields: Vec<Vec<String>> = timed(pipe.query_async(&mut con)).await.map_err(err)?;
            out.extend(fields.iter().map(|f| {
                f.iter()
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .sum::<u64>()
            }));
        }
        Ok(out)
    }
}

/// A call to Redis bounded by [`CALL_TIMEOUT`]; errors as text (they never hold the
/// address).
async fn timed<T>(call: impl Future<Output = redis::RedisResult<T>>) -> Result<T, String> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("no reply in time".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let info = parse_url("redis://127.0.0.1:6380").unwrap();
        assert!(matches!(info.addr(), ConnectionAddr::Tcp(h, 6380) if h == "127.0.0.1"));
        assert_eq!(info.redis_settings().db(), 0);
        let info = parse_url("redis://:pw@localhost/2").unwrap();
        assert!(matches!(info.addr(), ConnectionAddr::Tcp(h, 6379) if h == "localhost"));
        assert_eq!(info.redis_settings().db(), 2);
        assert_eq!(info.redis_settings().username(), None);
        assert_eq!(info.redis_settings().password(), Some("pw"));
        let info = parse_url("redis://ops:p%40ss@h:1").unwrap();
        assert_eq!(info.redis_settings().username(), Some("ops"));
        assert_eq!(info.redis_settings().password(), Some("p@ss"));
        assert!(
            matches!(parse_url("redis://[::1]:7000").unwrap().addr(), ConnectionAddr::Tcp(h, 7000) if h == "::1")
        );
        assert!(parse_url("http://x").is_err());
        assert!(parse_url("rediss://h:1").is_err());
        assert!(parse_url("redis+unix:///tmp/r.sock").is_err());
        assert!(parse_url("redis://").is_err());
        assert!(parse_url("redis://h:1/x").is_err());
        let e = parse_url("redis://u:secret@h:1/x").unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }

    #[test]
    fn passwords_are_never_shown() {
        for (given, shown) in [
            (
                "redis://user:pass@host:6379/2",
                "redis://user:***@host:6379/2",
            ),
            ("redis://:pass@host", "redis://:***@host"),
            ("redis://user:p@ss:w/rd@host:1", "redis://user:***@host:1"),
            ("redis://user:pa/ss@host", "redis://user:***@host"),
            ("redis://user@host:6379", "redis://user@host:6379"),
            ("redis://host:6379/0", "redis://host:6379/0"),
            ("redis://[::1]:7000", "redis://[::1]:7000"),
            ("user:pass@host", "user:***@host"),
            ("", ""),
        ] {
            assert_eq!(redact(given), shown, "{given}");
        }
    }

    #[tokio::test]
    async fn errors_and_logs_show_the_address_without_its_password() {
        // A malformed address: the error names it, redacted.
        let e = Remote::new("redis://ops:hunter2@127.0.0.1:1/x")
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("redis://ops:***@127.0.0.1:1/x"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
        // An unreachable one: the store keeps it redacted for its log lines.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = Remote::new(&format!("redis://ops:hunter2@127.0.0.1:{port}"))
            .await
            .unwrap();
        assert!(!r.healthy());
        let shown = format!("{r:?}");
        assert!(
            shown.contains(&format!("redis://ops:***@127.0.0.1:{port}")),
            "{shown}"
        );
        assert!(!shown.contains("hunter2"), "{shown}");
        let e = r.totals(&["k".into()], 0).await.unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(e.contains("redis://ops:***@"), "{e}");
    }
}
