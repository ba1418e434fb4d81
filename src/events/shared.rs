//! One event sequence for several replicas: the swaps and their events in Redis.
//!
//! With `--usage-store redis://…` every replica serves the same snapshot files and
//! swaps them on its own; each would number the same changes differently in its own
//! log. Here the numbering and the events live in Redis, once, and every replica's
//! local log is a mirror of them:
//!
//! ```text
//! tldsnap:events:next                       counter: the last event id given
//! tldsnap:swaps:index                       hash "{from}:{to}" → "{first_id}:{at_ms}": the swaps a pair is registered as
//! tldsnap:swaps                             stream, one entry per registered swap: from, to, first_id, count, at_ms
//! tldsnap:events:{from}:{to}:{first_id}     stream, one entry per event, id "{event id}-0", field e = the event JSON
//! ```
//!
//! - **Register** ([`REGISTER`], one Lua script, atomic): a pair already in the index is
//!   the same swap (another replica registered it, or it is a replay) and gets its
//!   registration back; a new pair takes `count` ids from the counter (never below the
//!   local log's own ids), gets the registering replica's time, and is added to the
//!   swaps stream. The local log's replay rule runs here: registering `from → to` forgets
//!   the pairs that start at `to` (after A→B, B→A, a later A→B is a change again).
//! - **Publish** ([`PUBLISH`]): the events of a registered swap go to its stream with
//!   explicit ids. `XADD` refuses an id not above the stream's last, so every replica may
//!   publish the same swap — the diff is deterministic and the events carry the
//!   registered ids and time, so they are the same bytes — and the stream holds each
//!   event once; a replica that died half-way is completed by the next.
//! - **Mirror**: a replica appends every registered swap its log lacks, in registration
//!   order, with the registered ids, from the streams. It does so before it swaps (so the
//!   swap it is making is in its log before it serves) and whenever the swaps stream
//!   grows (a thread blocked in `XREAD`), so replicas that did not swap yet serve the
//!   same events, with the same ids: `Last-Event-ID` resumes on any of them.
//! - **Redis down**: a swap is refused (the old snapshot keeps serving and `--watch`
//!   tries again), so no replica serves prices whose events are not in Redis.
//!
//! The connection is a blocking one of the `redis` crate (swaps are rare and already
//! wait for an fsync); the scripts run by `EVALSHA` (loaded the first time), the
//! streams are read with the crate's stream replies, and the address is the usage
//! store's, parsed and shown (password hidden) by [`crate::access::remote`].

use std::time::Duration;

use redis::streams::{StreamId, StreamRangeReply, StreamReadReply};
use redis::{Client, Connection, FromRedisValue, RedisResult, Script};

use crate::access::remote::{parse_url, redact};

/// Longest wait for a reply (`XREAD BLOCK` waits [`BLOCK_MS`] more).
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the mirror thread's `XREAD` waits for a new swap before looking again.
pub const BLOCK_MS: u64 = 1000;
/// Events published per script call: the script's arguments stay a few MB.
const PUBLISH_CHUNK: usize = 2000;

const COUNTER: &str = "tldsnap:events:next";
const INDEX: &str = "tldsnap:swaps:index";
const SWAPS: &str = "tldsnap:swaps";

/// Registers a swap. KEYS: index, counter, swaps stream. ARGV: from, to, count, at_ms,
/// floor (the last id the local log gave). Returns {new (0/1), first_id, at_ms}.
pub const REGISTER: &str = r#"
local pair = ARGV[1] .. ':' .. ARGV[2]
local found = redis.call('HGET', KEYS[1], pair)
if found then
  local first, at = string.match(found, '^(%d+):(%-?%d+)$')
  return {0, first, at}
end
local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
local floor = tonumber(ARGV[5])
if floor > cur then cur = floor end
local count = tonumber(ARGV[3])
local first = cur + 1
redis.call('SET', KEYS[2], string.format('%d', cur + count))
local prefix = ARGV[2] .. ':'
for _, k in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(k, 1, #prefix) == prefix then redis.call('HDEL', KEYS[1], k) end
end
local firsts = string.format('%d', first)
redis.call('HSET', KEYS[1], pair, firsts .. ':' .. ARGV[4])
redis.call('XADD', KEYS[3], '*', 'from', ARGV[1], 'to', ARGV[2], 'first_id', firsts,
  'count', ARGV[3], 'at_ms', ARGV[4])
return {1, firsts, ARGV[4]}
"#;

/// Publishes events of a swap. KEYS: its events stream. ARGV: the id of the first event
/// given, then the events. Adds those above the stream's last id; returns how many.
pub const PUBLISH: &str = r#"
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local last = 0
if #top > 0 then last = tonumber(string.match(top[1][1], '^(%d+)')) end
local first = tonumber(ARGV[1])
local added = 0
for i = 2, #ARGV do
  local id = first + i - 2
  if id > last then
    redis.call('XADD', KEYS[1], string.format('%d-0', id), 'e', ARGV[i])
    added = added + 1
  end
end
return added
"#;

/// A swap as Redis registered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// Content hash of the snapshot swapped out.
    pub from: u128,
    /// Content hash of the snapshot swapped in.
    pub to: u128,
    /// Id of its first event.
    pub first_id: u64,
    /// How many events it has.
    pub count: u32,
    /// When it was registered, Unix ms (the time of its events).
    pub at_ms: i64,
    /// Its entry id in the swaps stream.
    pub entry: String,
}

/// A blocking connection to the Redis that holds the shared sequence.
pub struct Shared {
    /// The address as shown: [`redact`]ed.
    url: String,
    client: Client,
    conn: Option<Connection>,
    register: Script,
    publish: Script,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("url", &self.url).finish()
    }
}

impl Shared {
    /// Connects to `redis://…` (the `--usage-store` address).
    pub fn connect(url: &str) -> Result<Shared, String> {
        let client = Client::open(parse_url(url)?).map_err(|e| e.to_string())?;
        let mut shared = Shared {
            url: redact(url),
            client,
            conn: None,
            register: Script::new(REGISTER),
            publish: Script::new(PUBLISH),
        };
        shared.query::<String>(&redis::cmd("PING"))?;
        Ok(shared)
    }

    /// The address it was given, password hidden: what logs and errors show.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `call` on the connection (opened first if there is none), waiting at most
    /// [`CALL_TIMEOUT`] + `extra` for the reply. A failure other than an error reply
    /// drops the connection (the next call reconnects).
    fn run<T>(
        &mut self,
        extra: Duration,
        call: impl FnOnce(&mut Connection, &Scripts<'_>) -> RedisResult<T>,
    ) -> Result<T, String> {
        if self.conn.is_none() {
            let conn = self
                .client
                .get_connection_with_timeout(CALL_TIMEOUT)
                .map_err(|e| e.to_string())?;
            conn.set_write_timeout(Some(CALL_TIMEOUT))
                .map_err(|e| e.to_string())?;
            self.conn = Some(conn);
        }
        let conn = self.conn.as_mut().expect("just opened");
        let scripts = Scripts {
            register: &self.register,
            publish: &self.publish,
        };
        let result = conn
            .set_read_timeout(Some(CALL_TIMEOUT + extra))
            .and_then(|()| call(conn, &scripts));
        if let Err(e) = &result
            && !matches!(
                e.kind(),
                redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
            )
        {
            self.conn = None;
        }
        result.map_err(|e| e.to_string())
    }

    fn query<T: FromRedisValue>(&mut self, cmd: &redis::Cmd) -> Result<T, String> {
        self.run(Duration::ZERO, |c, _| cmd.query(c))
    }

    /// Registers the swap `from → to` of `count` events (see the module docs); `floor`
    /// is the last id the local log gave. Returns the registration and whether this
    /// call made it.
    pub fn register(
        &mut self,
        from: u128,
        to: u128,
        count: u32,
        at_ms: i64,
        floor: u64,
    ) -> Result<(u64, i64, bool), String> {
        let (new, first, at): (i64, u64, i64) = self.run(Duration::ZERO, |c, s| {
            s.register
                .key(INDEX)
                .key(COUNTER)
                .key(SWAPS)
                .arg(hex(from))
                .arg(hex(to))
                .arg(count)
                .arg(at_ms)
                .arg(floor)
                .invoke(c)
        })?;
        Ok((first, at, new == 1))
    }

    /// Publishes the events (JSON, in order, the first with id `first_id`) of the swap
    /// registered as `from → to` at `first_id`.
    pub fn publish(
        &mut self,
        from: u128,
        to: u128,
        first_id: u64,
        events: &[&[u8]],
    ) -> Result<(), String> {
        let key = events_key(from, to, first_id);
        for (i, chunk) in events.chunks(PUBLISH_CHUNK).enumerate() {
            let start = first_id + (i * PUBLISH_CHUNK) as u64;
            let _added: u64 = self.run(Duration::ZERO, |c, s| {
                let mut call = s.publish.key(&key);
                call.arg(start);
                for e in chunk {
                    call.arg(*e);
                }
                call.invoke(c)
            })?;
        }
        Ok(())
    }

    /// The swaps registered after the swaps-stream entry `after` ("0-0": all), in order.
    pub fn swaps_after(&mut self, after: &str) -> Result<Vec<Registered>, String> {
        let reply: StreamRangeReply = self.query(
            redis::cmd("XRANGE")
                .arg(SWAPS)
                .arg(format!("({after}"))
                .arg("+"),
        )?;
        reply.ids.iter().map(registered).collect()
    }

    /// Waits up to [`BLOCK_MS`] for swaps registered after `after`; returns them (none
    /// when the wait ended without one).
    pub fn wait_swaps(&mut self, after: &str) -> Result<Vec<Registered>, String> {
        let reply: Option<StreamReadReply> =
            self.run(Duration::from_millis(BLOCK_MS), |c, _| {
                redis::cmd("XREAD")
                    .arg("BLOCK")
                    .arg(BLOCK_MS)
                    .arg("STREAMS")
                    .arg(SWAPS)
                    .arg(after)
                    .query(c)
            })?;
        let mut out = Vec::new();
        for stream in reply.map(|r| r.keys).unwrap_or_default() {
            for entry in &stream.ids {
                out.push(registered(entry)?);
            }
        }
        Ok(out)
    }

    /// The events of a registered swap, in id order; an error unless all `count` are
    /// there.
    pub fn events(&mut self, swap: &Registered) -> Result<Vec<Vec<u8>>, String> {
        let key = events_key(swap.from, swap.to, swap.first_id);
        let reply: StreamRangeReply =
            self.query(redis::cmd("XRANGE").arg(&key).arg("-").arg("+"))?;
        let mut out = Vec::with_capacity(swap.count as usize);
        for (k, entry) in reply.ids.iter().enumerate() {
            if entry.id != format!("{}-0", swap.first_id + k as u64) {
                return Err(format!("{key}: entry {} out of sequence", k + 1));
            }
            let value = entry
                .map
                .get("e")
                .ok_or_else(|| format!("{key}: entry {} without e", k + 1))?;
            out.push(
                redis::from_redis_value_ref::<Vec<u8>>(value)
                    .map_err(|e| format!("{key}: entry {}: {e}", k + 1))?,
            );
        }
        if out.len() != swap.count as usize {
            return Err(format!(
                "{key} holds {} of its {} events (a replica is publishing it)",
                out.len(),
                swap.count
            ));
        }
        Ok(out)
    }

    /// Removes what Redis holds of swaps the retention removed: their events streams,
    /// their swaps-stream entries and their index entries (when still theirs). Ids
    /// never repeat: the counter stays.
    pub fn forget(&mut self, swaps: &[Registered]) -> Result<(), String> {
        for s in swaps {
            let key = events_key(s.from, s.to, s.first_id);
            self.query::<u64>(redis::cmd("DEL").arg(&key))?;
            self.query::<u64>(redis::cmd("XDEL").arg(SWAPS).arg(&s.entry))?;
            let pair = format!("{}:{}", hex(s.from), hex(s.to));
            let index: Option<String> = self.query(redis::cmd("HGET").arg(INDEX).arg(&pair))?;
            if index.is_some_and(|v| v.starts_with(&format!("{}:", s.first_id))) {
                self.query::<u64>(redis::cmd("HDEL").arg(INDEX).arg(&pair))?;
            }
        }
        Ok(())
    }
}

/// The two scripts, lent to a call beside the connection.
struct Scripts<'a> {
    register: &'a Script,
    publish: &'a Script,
}

impl Shared {
    /// [`Shared::forget`]s the swaps registered before `cutoff_ms` (the retention).
    pub fn forget_older(&mut self, cutoff_ms: i64) -> Result<usize, String> {
        let old: Vec<Registered> = self
            .swaps_after("0-0")?
            .into_iter()
            .filter(|s| s.at_ms < cutoff_ms)
            .collect();
        self.forget(&old)?;
        Ok(old.len())
    }
}

/// The stream of one registered swap's events.
pub fn events_key(from: u128, to: u128, first_id: u64) -> String {
    format!("tldsnap:events:{}:{}:{first_id}", hex(from), hex(to))
}

fn hex(h: u128) -> String {
    format!("{h:032x}")
}

/// A swaps-stream entry: fields from, to, first_id, count, at_ms.
fn registered(entry: &StreamId) -> Result<Registered, String> {
    let id = &entry.id;
    let text = |name: &str| -> Result<String, String> {
        entry
            .get::<String>(name)
            .ok_or_else(|| format!("swap entry {id} without {name}"))
    };
    let hash = |name: &str| -> Result<u128, String> {
        let t = text(name)?;
        u128::from_str_radix(&t, 16).map_err(|_| format!("swap entry {id}: bad {name}"))
    };
    let num = |name: &str| -> Result<i64, String> {
        text(name)?
            .parse()
            .map_err(|_| format!("swap entry {id}: bad {name}"))
    };
    Ok(Registered {
        from: hash("from")?,
        to: hash("to")?,
        first_id: num("first_id")? as u64,
        count: num("count")? as u32,
        at_ms: num("at_ms")?,
        entry: id.clone(),
    })
}
