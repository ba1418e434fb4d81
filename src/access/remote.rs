//! Credits shared by several replicas through Redis, with a small hand-written RESP
//! client (one pipelined connection, a few commands, two Lua scripts).
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

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

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

/// A parsed RESP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR ...`
    Error(String),
    /// `:42`
    Int(i64),
    /// `$n` bulk string (`None`: nil).
    Bulk(Option<Vec<u8>>),
    /// `*n` array (`None`: nil).
    Array(Option<Vec<Reply>>),
}

/// Encodes a command as a RESP array of bulk strings.
pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + args.iter().map(|a| a.len() + 16).sum::<usize>());
    out.push(b'*');
    out.extend_from_slice(args.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        out.extend_from_slice(a.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Parses one reply from the front of `buf`: `Ok(None)` when more bytes are needed,
/// otherwise the reply and the number of bytes it took.
pub fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    parse_at(buf, 0, 0)
}

fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(at..)?;
    let pos = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..pos], at + pos + 2))
}

fn parse_at(buf: &[u8], at: usize, depth: usize) -> Result<Option<(Reply, usize)>, String> {
    if depth > 8 {
        return Err("reply nested too deeply".into());
    }
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    let Some((text, next)) = line(buf, at + 1) else {
        return Ok(None);
    };
    let text_str = || String::from_utf8_lossy(text).into_owned();
    let int = || -> Result<i64, String> {
        std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad integer {:?}", text_str()))
    };
    match kind {
        b'+' => Ok(Some((Reply::Simple(text_str()), next))),
        b'-' => Ok(Some((Reply::Error(text_str()), next))),
        b':' => Ok(Some((Reply::Int(int()?), next))),
        b'$' => {
            let n = int()?;
            if n < 0 {
                return Ok(Some((Reply::Bulk(None), next)));
            }
            let n = usize::try_from(n).map_err(|_| "bad length")?;
            if n > 512 << 20 {
                return Err("bulk reply too large".into());
            }
            if buf.len() < next + n + 2 {
                return Ok(None);
            }
            if &buf[next + n..next + n + 2] != b"\r\n" {
                return Err("bulk reply without CRLF".into());
            }
            Ok(Some((
                Reply::Bulk(Some(buf[next..next + n].to_vec())),
                next + n + 2,
            )))
        }
        b'*' => {
            let n = int()?;
            if n < 0 {
                return Ok(Some((Reply::Array(None), next)));
            }
            if n > 1 << 20 {
                return Err("array reply too large".into());
            }
            let mut items = Vec::with_capacity(n as usize);
            let mut pos = next;
            for _ in 0..n {
                match parse_at(buf, pos, depth + 1)? {
                    Some((r, p)) => {
                        items.push(r);
                        pos = p;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Reply::Array(Some(items)), pos)))
        }
        other => Err(format!("unknown reply type byte {other:#04x}")),
    }
}

fn as_u64(r: &Reply) -> Option<u64> {
    match r {
        Reply::Int(i) => u64::try_from(*i).ok(),
        Reply::Bulk(Some(b)) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        _ => None,
    }
}

struct Request {
    bytes: Vec<u8>,
    reply: oneshot::Sender<Reply>,
}

/// One pipelined connection: callers send commands through a channel; a task writes
/// them and matches replies to callers in order (Redis answers in order).
struct Conn {
    tx: mpsc::UnboundedSender<Request>,
    grab_sha: String,
    set_sha: String,
}

async fn drive(stream: tokio::net::TcpStream, mut rx: mpsc::UnboundedReceiver<Request>) {
    let (mut rd, mut wr) = stream.into_split();
    let mut waiting: VecDeque<oneshot::Sender<Reply>> = VecDeque::new();
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    loop {
        tokio::select! {
            req = rx.recv() => {
                let Some(req) = req else { return };
                if wr.write_all(&req.bytes).await.is_err() {
                    return;
                }
                waiting.push_back(req.reply);
            }
            n = rd.read_buf(&mut buf) => {
                match n {
                    Ok(0) | Err(_) => return,
                    Ok(_) => loop {
                        match parse(&buf) {
                            Ok(Some((reply, used))) => {
                                buf.drain(..used);
                                match waiting.pop_front() {
                                    Some(tx) => { let _ = tx.send(reply); }
                                    // A reply nobody asked for: the stream is out of step.
                                    None => return,
                                }
                            }
                            Ok(None) => break,
                            Err(_) => return,
                        }
                    },
                }
            }
        }
    }
}

/// Where and how to reach Redis, from `redis://[[USER]:PASSWORD@]HOST:PORT[/DB]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `HOST:PORT` for `TcpStream::connect`.
    pub addr: String,
    /// Database number to `SELECT`.
    pub db: Option<u32>,
    /// Credentials for `AUTH`.
    pub auth: Option<(Option<String>, String)>,
}

/// Parses a `redis://` address.
pub fn parse_url(url: &str) -> Result<Target, String> {
    let rest = url
        .strip_prefix("redis://")
        .ok_or("the usage store must be a redis://HOST:PORT address")?;
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((a, h)) => {
            let (user, pass) = match a.split_once(':') {
                Some((u, p)) => ((!u.is_empty()).then(|| u.to_string()), p.to_string()),
                None => (None, a.to_string()),
            };
            (Some((user, pass)), h)
        }
        None => (None, rest),
    };
    let (hostport, db) = match hostpart.split_once('/') {
        Some((h, "")) => (h, None),
        Some((h, d)) => (
            h,
            Some(
                d.parse::<u32>()
                    .map_err(|_| format!("database {d:?} is not a number"))?,
            ),
        ),
        None => (hostpart, None),
    };
    let hostport = hostport.trim_end_matches('/');
    if hostport.is_empty() {
        return Err("no host in the address".into());
    }
    let has_port = match hostport.rfind(']') {
        Some(i) => hostport[i..].contains(':'),
        None => hostport.contains(':'),
    };
    let addr = if has_port {
        hostport.to_string()
    } else {
        format!("{hostport}:6379")
    };
    Ok(Target { addr, db, auth })
}

/// The shared usage store.
pub struct Remote {
    url: String,
    target: Target,
    replica: String,
    conn: ArcSwapOption<Conn>,
    connecting: tokio::sync::Mutex<()>,
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
        let target = parse_url(url).map_err(|message| AccessError::UsageStore {
            url: url.to_string(),
            message,
        })?;
        let mut id = [0u8; 8];
        getrandom::fill(&mut id).map_err(|e| AccessError::Random(e.to_string()))?;
        let r = Remote {
            url: url.to_string(),
            target,
            replica: super::keys::to_hex(&id),
            conn: ArcSwapOption::empty(),
            connecting: tokio::sync::Mutex::new(()),
        };
        if let Err(e) = r.connect().await {
            eprintln!(
                "tldsnap: usage store {url} is unreachable ({e}); serving on local counts until it answers"
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
        self.conn.load().as_ref().is_some_and(|c| !c.tx.is_closed())
    }

    async fn connect(&self) -> Result<(), String> {
        let _one = self.connecting.lock().await;
        if self.conn.load().is_some() {
            return Ok(());
        }
        let stream = tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::TcpStream::connect(&self.target.addr),
        )
        .await
        .map_err(|_| "connection timed out".to_string())?
        .map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(drive(stream, rx));
        let mut conn = Conn {
            tx,
            grab_sha: String::new(),
            set_sha: String::new(),
        };
        if let Some((user, pass)) = &self.target.auth {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(u) = user {
                args.push(u.as_bytes());
            }
            args.push(pass.as_bytes());
            call(&conn, &args).await?;
        }
        if let Some(db) = self.target.db {
            call(&conn, &[b"SELECT", db.to_string().as_bytes()]).await?;
        }
        let sha = |r: Reply| match r {
            Reply::Bulk(Some(b)) => {
                String::from_utf8(b).map_err(|_| "bad SCRIPT LOAD reply".to_string())
            }
            other => Err(format!("unexpected SCRIPT LOAD reply {other:?}")),
        };
        conn.grab_sha = sha(call(&conn, &[b"SCRIPT", b"LOAD", GRAB.as_bytes()]).await?)?;
        conn.set_sha = sha(call(&conn, &[b"SCRIPT", b"LOAD", SET.as_bytes()]).await?)?;
        self.conn.store(Some(Arc::new(conn)));
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

    /// Runs a script by its SHA on the current connection; any failure marks it down.
    async fn script(&self, which_grab: bool, key: &str, args: &[&[u8]]) -> Result<Reply, String> {
        let Some(conn) = self.conn.load_full() else {
            return Err("not connected".into());
        };
        let sha = if which_grab {
            &conn.grab_sha
        } else {
            &conn.set_sha
        };
        let mut full: Vec<&[u8]> = vec![b"EVALSHA", sha.as_bytes(), b"1", key.as_bytes()];
        full.extend_from_slice(args);
        let mut r = call(&conn, &full).await;
        if let Err(e) = &r
            && e.starts_with("NOSCRIPT")
        {
            // Redis restarted behind the same connection (or flushed its scripts).
            let body = if which_grab { GRAB } else { SET };
            full[0] = b"EVAL";
            full[1] = body.as_bytes();
            r = call(&conn, &full).await;
        }
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
        let key = hash_key(month, id);
        let (b, w, l, t) = (
            base.to_string(),
            want.to_string(),
            limit.to_string(),
            TTL_SECS.to_string(),
        );
        let args: [&[u8]; 5] = [
            self.replica.as_bytes(),
            b.as_bytes(),
            w.as_bytes(),
            l.as_bytes(),
            t.as_bytes(),
        ];
        match self.script(true, &key, &args).await? {
            Reply::Array(Some(v)) if v.len() == 2 => match (as_u64(&v[0]), as_u64(&v[1])) {
                (Some(f), Some(t)) => Ok((f, t)),
                _ => Err("bad grab reply".into()),
            },
            other => {
                let e = format!("unexpected grab reply {other:?}");
                self.down(&e);
                Err(e)
            }
        }
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
        let key = hash_key(month, id);
        let (v, t) = (value.to_string(), TTL_SECS.to_string());
        let args: [&[u8]; 3] = [field.as_bytes(), v.as_bytes(), t.as_bytes()];
        let r = self.script(false, &key, &args).await?;
        as_u64(&r).ok_or_else(|| {
            let e = format!("unexpected set reply {r:?}");
            self.down(&e);
            e
        })
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
        let l = &meter.lease;
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
            let l = &meter.lease;
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
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let key = hash_key(month, id);
            let r = call(&conn, &[b"HVALS", key.as_bytes()])
                .await
                .map_err(err)?;
            let sum = match r {
                Reply::Array(Some(v)) => v.iter().filter_map(as_u64).sum(),
                _ => 0,
            };
            out.push(sum);
        }
        Ok(out)
    }
}

async fn call(conn: &Conn, args: &[&[u8]]) -> Result<Reply, String> {
    let (tx, rx) = oneshot::channel();
    conn.tx
        .send(Request {
            bytes: encode(args),
            reply: tx,
        })
        .map_err(|_| "connection closed".to_string())?;
    match tokio::time::timeout(CALL_TIMEOUT, rx).await {
        Ok(Ok(Reply::Error(e))) => Err(e),
        Ok(Ok(r)) => Ok(r),
        Ok(Err(_)) => Err("connection closed".into()),
        Err(_) => Err("no reply in time".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_round_trip() {
        assert_eq!(encode(&[b"GET", b"k"]), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        let buf = b"*2\r\n:5\r\n$3\r\nabc\r\n+OK\r\n";
        let (r, n) = parse(buf).unwrap().unwrap();
        assert_eq!(
            r,
            Reply::Array(Some(vec![
                Reply::Int(5),
                Reply::Bulk(Some(b"abc".to_vec()))
            ]))
        );
        assert_eq!(
            parse(&buf[n..]).unwrap().unwrap().0,
            Reply::Simple("OK".into())
        );
        for cut in 0..n {
            assert_eq!(parse(&buf[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(parse(b"$-1\r\n").unwrap().unwrap().0, Reply::Bulk(None));
        assert_eq!(
            parse(b"-NOSCRIPT x\r\n").unwrap().unwrap().0,
            Reply::Error("NOSCRIPT x".into())
        );
        assert!(parse(b"?\r\n").is_err());
        assert!(parse(b":x\r\n").is_err());
    }

    #[test]
    fn urls() {
        let t = parse_url("redis://127.0.0.1:6380").unwrap();
        assert_eq!(
            (t.addr.as_str(), t.db, t.auth),
            ("127.0.0.1:6380", None, None)
        );
        let t = parse_url("redis://:pw@localhost/2").unwrap();
        assert_eq!(t.addr, "localhost:6379");
        assert_eq!(t.db, Some(2));
        assert_eq!(t.auth, Some((None, "pw".into())));
        assert_eq!(parse_url("redis://[::1]:7000").unwrap().addr, "[::1]:7000");
        assert!(parse_url("http://x").is_err());
        assert!(parse_url("redis://").is_err());
        assert!(parse_url("redis://h:1/x").is_err());
    }
}
