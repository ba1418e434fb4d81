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
//! The connection is a blocking one (swaps are rare and already wait for an fsync);
//! the RESP encoding and parsing are the usage store's ([`crate::access::remote`]).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::access::remote::{Reply, Target, encode, parse, parse_url};

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
    url: String,
    target: Target,
    conn: Option<Conn>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("url", &self.url).finish()
    }
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Shared {
    /// Connects to `redis://…` (the `--usage-store` address).
    pub fn connect(url: &str) -> Result<Shared, String> {
        let mut shared = Shared {
            url: url.to_owned(),
            target: parse_url(url)?,
            conn: None,
        };
        shared.call(&[b"PING"])?;
        Ok(shared)
    }

    /// The address it was given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One command and its reply; an error reply is an `Err`. A broken connection is
    /// dropped (the next call reconnects).
    fn call(&mut self, args: &[&[u8]]) -> Result<Reply, String> {
        self.call_waiting(args, Duration::ZERO)
    }

    fn call_waiting(&mut self, args: &[&[u8]], extra: Duration) -> Result<Reply, String> {
        if self.conn.is_none() {
            self.conn = Some(open(&self.target)?);
        }
        let conn = self.conn.as_mut().expect("just opened");
        let result = conn.call(args, CALL_TIMEOUT + extra);
        if let Err(e) = &result
            && !e.is_reply
        {
            self.conn = None;
        }
        result.map_err(|e| e.text)
    }

    fn eval(&mut self, script: &str, keys: &[&str], args: &[&[u8]]) -> Result<Reply, String> {
        let n = keys.len().to_string();
        let mut full: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), n.as_bytes()];
        full.extend(keys.iter().map(|k| k.as_bytes()));
        full.extend_from_slice(args);
        self.call(&full)
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
        let (f, t) = (hex(from), hex(to));
        let (count, at, floor) = (count.to_string(), at_ms.to_string(), floor.to_string());
        let reply = self.eval(
            REGISTER,
            &[INDEX, COUNTER, SWAPS],
            &[
                f.as_bytes(),
                t.as_bytes(),
                count.as_bytes(),
                at.as_bytes(),
                floor.as_bytes(),
            ],
        )?;
        let items = array(reply)?;
        let [new, first, at] = items.as_slice() else {
            return Err("unexpected reply to the swap registration".into());
        };
        Ok((
            number(first)?,
            number(at)? as i64,
            matches!(new, Reply::Int(1)),
        ))
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
            let start = (first_id + (i * PUBLISH_CHUNK) as u64).to_string();
            let mut args: Vec<&[u8]> = vec![start.as_bytes()];
            args.extend_from_slice(chunk);
            self.eval(PUBLISH, &[&key], &args)?;
        }
        Ok(())
    }

    /// The swaps registered after the swaps-stream entry `after` ("0-0": all), in order.
    pub fn swaps_after(&mut self, after: &str) -> Result<Vec<Registered>, String> {
        let start = format!("({after}");
        let reply = self.call(&[b"XRANGE", SWAPS.as_bytes(), start.as_bytes(), b"+"])?;
        array(reply)?.into_iter().map(registered).collect()
    }

    /// Waits up to [`BLOCK_MS`] for swaps registered after `after`; returns them (none
    /// when the wait ended without one).
    pub fn wait_swaps(&mut self, after: &str) -> Result<Vec<Registered>, String> {
        let block = BLOCK_MS.to_string();
        let reply = self.call_waiting(
            &[
                b"XREAD",
                b"BLOCK",
                block.as_bytes(),
                b"STREAMS",
                SWAPS.as_bytes(),
                after.as_bytes(),
            ],
            Duration::from_millis(BLOCK_MS),
        )?;
        match reply {
            Reply::Array(None) => Ok(Vec::new()),
            reply => {
                let streams = array(reply)?;
                let mut out = Vec::new();
                for stream in streams {
                    let mut parts = array(stream)?.into_iter();
                    let entries = parts.nth(1).ok_or("XREAD reply without entries")?;
                    for entry in array(entries)? {
                        out.push(registered(entry)?);
                    }
                }
                Ok(out)
            }
        }
    }

    /// The events of a registered swap, in id order; an error unless all `count` are
    /// there.
    pub fn events(&mut self, swap: &Registered) -> Result<Vec<Vec<u8>>, String> {
        let key = events_key(swap.from, swap.to, swap.first_id);
        let reply = self.call(&[b"XRANGE", key.as_bytes(), b"-", b"+"])?;
        let mut out = Vec::with_capacity(swap.count as usize);
        for (k, entry) in array(reply)?.into_iter().enumerate() {
            let mut parts = array(entry)?.into_iter();
            let id = bulk(parts.next().ok_or("an entry without id")?)?;
            if id != format!("{}-0", swap.first_id + k as u64).into_bytes() {
                return Err(format!("{key}: entry {} out of sequence", k + 1));
            }
            let fields = array(parts.next().ok_or("an entry without fields")?)?;
            let value = fields.into_iter().nth(1).ok_or("an entry without e")?;
            out.push(bulk(value)?);
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
            self.call(&[b"DEL", key.as_bytes()])?;
            self.call(&[b"XDEL", SWAPS.as_bytes(), s.entry.as_bytes()])?;
            let pair = format!("{}:{}", hex(s.from), hex(s.to));
            if let Reply::Bulk(Some(v)) =
                self.call(&[b"HGET", INDEX.as_bytes(), pair.as_bytes()])?
                && v.starts_with(format!("{}:", s.first_id).as_bytes())
            {
                self.call(&[b"HDEL", INDEX.as_bytes(), pair.as_bytes()])?;
            }
        }
        Ok(())
    }
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

struct CallError {
    text: String,
    /// Redis answered with an error (the connection is fine).
    is_reply: bool,
}

impl Conn {
    fn call(&mut self, args: &[&[u8]], timeout: Duration) -> Result<Reply, CallError> {
        let io = |e: std::io::Error| CallError {
            text: e.to_string(),
            is_reply: false,
        };
        self.stream.set_read_timeout(Some(timeout)).map_err(io)?;
        self.stream.write_all(&encode(args)).map_err(io)?;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match parse(&self.buf) {
                Ok(Some((reply, used))) => {
                    self.buf.drain(..used);
                    return match reply {
                        Reply::Error(e) => Err(CallError {
                            text: e,
                            is_reply: true,
                        }),
                        r => Ok(r),
                    };
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(CallError {
                        text: e,
                        is_reply: false,
                    });
                }
            }
            let n = self.stream.read(&mut chunk).map_err(io)?;
            if n == 0 {
                return Err(CallError {
                    text: "connection closed".into(),
                    is_reply: false,
                });
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn open(target: &Target) -> Result<Conn, String> {
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&target.addr)
        .map_err(|e| format!("{}: {e}", target.addr))?
        .next()
        .ok_or_else(|| format!("{}: no address", target.addr))?;
    let stream = TcpStream::connect_timeout(&addr, CALL_TIMEOUT)
        .map_err(|e| format!("{}: {e}", target.addr))?;
    let _ = stream.set_nodelay(true);
    stream
        .set_write_timeout(Some(CALL_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
    };
    let text = |e: CallError| e.text;
    if let Some((user, pass)) = &target.auth {
        let mut args: Vec<&[u8]> = vec![b"AUTH"];
        if let Some(u) = user {
            args.push(u.as_bytes());
        }
        args.push(pass.as_bytes());
        conn.call(&args, CALL_TIMEOUT).map_err(text)?;
    }
    if let Some(db) = target.db {
        conn.call(&[b"SELECT", db.to_string().as_bytes()], CALL_TIMEOUT)
            .map_err(text)?;
    }
    Ok(conn)
}

fn array(r: Reply) -> Result<Vec<Reply>, String> {
    match r {
        Reply::Array(Some(items)) => Ok(items),
        other => Err(format!("expected an array, got {other:?}")),
    }
}

fn bulk(r: Reply) -> Result<Vec<u8>, String> {
    match r {
        Reply::Bulk(Some(b)) => Ok(b),
        other => Err(format!("expected a string, got {other:?}")),
    }
}

fn number(r: &Reply) -> Result<u64, String> {
    match r {
        Reply::Int(i) => u64::try_from(*i).map_err(|_| format!("negative {i}")),
        Reply::Bulk(Some(b)) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .map(|n| n as u64)
            .ok_or_else(|| format!("not a number: {:?}", String::from_utf8_lossy(b))),
        other => Err(format!("expected a number, got {other:?}")),
    }
}

/// A swaps-stream entry: `[id, [field, value, …]]`.
fn registered(entry: Reply) -> Result<Registered, String> {
    let mut parts = array(entry)?.into_iter();
    let entry = String::from_utf8(bulk(parts.next().ok_or("an entry without id")?)?)
        .map_err(|_| "an entry id that is not text")?;
    let fields = array(parts.next().ok_or("an entry without fields")?)?;
    let mut get = std::collections::HashMap::new();
    let mut it = fields.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        get.insert(bulk(k)?, bulk(v)?);
    }
    let text = |name: &str| -> Result<String, String> {
        get.get(name.as_bytes())
            .and_then(|v| String::from_utf8(v.clone()).ok())
            .ok_or_else(|| format!("swap entry {entry} without {name}"))
    };
    let hash = |name: &str| -> Result<u128, String> {
        let t = text(name)?;
        u128::from_str_radix(&t, 16).map_err(|_| format!("swap entry {entry}: bad {name}"))
    };
    let num = |name: &str| -> Result<i64, String> {
        text(name)?
            .parse()
            .map_err(|_| format!("swap entry {entry}: bad {name}"))
    };
    Ok(Registered {
        from: hash("from")?,
        to: hash("to")?,
        first_id: num("first_id")? as u64,
        count: num("count")? as u32,
        at_ms: num("at_ms")?,
        entry,
    })
}
