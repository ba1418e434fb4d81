//! Whole answers kept for reuse: the body of a metered JSON answer depends only on the
//! snapshot, the caller's plan and the request target (route, path segment, query
//! string), so the second request for the same target on the same snapshot is answered
//! with the bytes of the first instead of parsing the parameters and writing the body
//! again. Everything else still happens for every request, in the order of checks (docs/API.md): the
//! key (401) and the rate limit (429) before, the credit (429) after. A target that was
//! refused (400, 403, 404) is never kept, so it is checked again every time.
//!
//! The cache is per worker thread (no lock, nothing shared between cores) and small: a
//! direct-mapped table of [`SLOTS`] answers of at most [`MAX_BODY`] bytes each, at most
//! [`BUDGET`] bytes in all; a new target takes the slot of the one it hashes to. It
//! belongs to one server ([`super::State`]) and one snapshot, by content hash: the
//! first request on another snapshot empties it, so a swap is seen at once and an old
//! snapshot's answers are never served (nor is the snapshot itself held: only copies
//! of its bytes). A thread that stops serving keeps at most [`BUDGET`] bytes until it
//! serves again.
//!
//! Answers with a per-request part are kept with that part cut out: the prices answers'
//! `stats.time_elapsed` is written anew into each copy ([`Cached::with_elapsed`]).

use std::cell::RefCell;
use std::ops::Range;

use bytes::Bytes;

use crate::http::body::{Body, Chunk};
use crate::http::router::Route;
use crate::http::same_bytes;
use crate::time::Stamp;

/// Answers kept per thread.
pub const SLOTS: usize = 512;
/// Largest body kept (cheapest for 10 TLDs at limit 10 is ~14 KB).
pub const MAX_BODY: usize = 32 * 1024;
/// Most bytes kept per thread, bodies and keys.
pub const BUDGET: usize = 2 * 1024 * 1024;
/// A kept body with a part written anew is copied below this size, and sent in chunks
/// from this size on: a copy is cheaper than another frame for hyper to write until it
/// is a few kilobytes long.
const COPY_BELOW: usize = 4096;
/// The most kept bytes after the part written anew that are copied behind it, so that
/// the body goes out in two chunks (the kept bytes before the part, then the part and
/// what follows it) rather than three: a frame costs hyper ~750 instructions, a copy of
/// this many bytes far fewer. The prices answers' `stats` end ~45 bytes after
/// `time_elapsed`.
const TAIL_WITH_PART: usize = 256;

/// What identifies an answer besides the snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The route.
    pub route: &'static Route,
    /// The caller's plan (its name: plans do not change while a server runs).
    pub plan: &'a str,
    /// The raw path segment of a route with a parameter (`""` otherwise).
    pub segment: &'a str,
    /// The raw query string (`""` when there is none).
    pub query: &'a str,
}

/// A kept answer.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The body as it was written.
    pub body: Bytes,
    /// Where its per-request part is (`stats.time_elapsed`'s value), if it has one.
    pub elapsed: Option<Range<usize>>,
}

impl Cached {
    /// The body with `stats.time_elapsed` measured from `started`, or as it was. A
    /// small body is copied with the new value in it; a larger one is sent as the kept
    /// bytes before the value, then the value and the few kept bytes after it (or, when
    /// more than `TAIL_WITH_PART` (256) follow, the value and then those kept bytes).
    pub fn with_elapsed(&self, started: Stamp) -> Body {
        let Some(span) = &self.elapsed else {
            return Body::from(self.body.clone());
        };
        if self.body.len() <= COPY_BELOW {
            let mut out = Vec::with_capacity(self.body.len() + crate::query::ELAPSED_ROOM);
            out.extend_from_slice(&self.body[..span.start]);
            crate::query::write_elapsed(started.elapsed(), &mut out);
            out.extend_from_slice(&self.body[span.end..]);
            return Body::from(out);
        }
        let head = self.body.slice(..span.start);
        let tail = &self.body[span.end..];
        let with_tail = tail.len() <= TAIL_WITH_PART;
        let mut part =
            Vec::with_capacity(crate::query::ELAPSED_ROOM + if with_tail { tail.len() } else { 0 });
        crate::query::write_elapsed(started.elapsed(), &mut part);
        if with_tail {
            part.extend_from_slice(tail);
            return Body::pair(head, Chunk::Owned { buf: part, pos: 0 });
        }
        Body::spliced(
            head,
            Chunk::Owned { buf: part, pos: 0 },
            self.body.slice(span.end..),
        )
    }
}

struct Slot {
    route: &'static Route,
    plan: Box<str>,
    /// The segment's bytes, then the query's.
    segment_query: Box<[u8]>,
    segment_len: usize,
    answer: Cached,
}

impl Slot {
    /// Whether the slot holds `target`'s answer: its parts compared where they lie,
    /// so that a lookup builds no key (and inline: [`same_bytes`]).
    fn holds(&self, target: &Target<'_>) -> bool {
        let (segment, query) = self.segment_query.split_at(self.segment_len);
        self.route.index == target.route.index
            && same_bytes(self.plan.as_bytes(), target.plan.as_bytes())
            && same_bytes(segment, target.segment.as_bytes())
            && same_bytes(query, target.query.as_bytes())
    }

    /// The bytes the slot counts against the thread's budget.
    fn bytes(&self) -> usize {
        self.plan.len() + self.segment_query.len() + self.answer.body.len()
    }
}

#[derive(Default)]
struct Cache {
    /// The server and snapshot the answers belong to.
    owner: u64,
    snapshot: u128,
    slots: Vec<Option<Slot>>,
    bytes: usize,
    /// Which slot a target takes (seeded per thread: a client cannot choose targets
    /// that all take one slot on every server).
    hasher: ahash::RandomState,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

impl Cache {
    /// Makes the cache the one of `owner` and `snapshot` (emptied if it was another's)
    /// and returns `target`'s slot.
    fn enter(&mut self, owner: u64, snapshot: u128, target: &Target<'_>) -> usize {
        if self.owner != owner || self.snapshot != snapshot || self.slots.is_empty() {
            self.slots.clear();
            self.slots.resize_with(SLOTS, || None);
            self.bytes = 0;
            self.owner = owner;
            self.snapshot = snapshot;
        }
        // The parts hashed one after the other (`str`'s `Hash` ends each with a
        // separator, so segment and query cannot trade bytes); building the key in a
        // buffer to hash it cost ~100 instructions a request more.
        let hash = self.hasher.hash_one((
            target.route.index as u8,
            target.plan,
            target.segment,
            target.query,
        ));
        hash as usize % SLOTS
    }
}

/// The answer kept for `target` on `snapshot` of server `owner`, if any.
pub fn get(owner: u64, snapshot: u128, target: &Target<'_>) -> Option<Cached> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let i = cache.enter(owner, snapshot, target);
        match &cache.slots[i] {
            Some(slot) if slot.holds(target) => Some(slot.answer.clone()),
            _ => None,
        }
    })
}

/// Keeps `body` as the answer for `target` (with its per-request part at `elapsed`),
/// unless it is too large or the thread's budget is spent.
pub fn put(
    owner: u64,
    snapshot: u128,
    target: &Target<'_>,
    body: &[u8],
    elapsed: Option<Range<usize>>,
) {
    if body.len() > MAX_BODY {
        return;
    }
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let i = cache.enter(owner, snapshot, target);
        let slot = Slot {
            route: target.route,
            plan: target.plan.into(),
            segment_query: [target.segment.as_bytes(), target.query.as_bytes()]
                .concat()
                .into_boxed_slice(),
            segment_len: target.segment.len(),
            answer: Cached {
                body: Bytes::copy_from_slice(body),
                elapsed,
            },
        };
        let freed = cache.slots[i].as_ref().map_or(0, Slot::bytes);
        let size = slot.bytes();
        if cache.bytes - freed + size > BUDGET {
            return;
        }
        cache.bytes = cache.bytes - freed + size;
        cache.slots[i] = Some(slot);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::http::router::GET_HEAD;

    static CHEAPEST: Route = Route::new(0, "/cheapest", GET_HEAD, true, false);
    static PUBLIC: Route = Route::new(1, "/public", GET_HEAD, false, false);
    static REGISTRARS: Route = Route::new(2, "/registrars/{tld}", GET_HEAD, true, false);

    fn target(query: &str) -> Target<'_> {
        Target {
            route: &CHEAPEST,
            plan: "pro",
            segment: "",
            query,
        }
    }

    #[test]
    fn an_answer_belongs_to_its_target_server_and_snapshot() {
        put(1, 7, &target("tlds=com"), b"com", None);
        assert_eq!(get(1, 7, &target("tlds=com")).unwrap().body, "com");
        assert!(get(1, 7, &target("tlds=net")).is_none());
        let other_plan = Target {
            plan: "basic",
            ..target("tlds=com")
        };
        assert!(get(1, 7, &other_plan).is_none());
        let other_route = Target {
            route: &PUBLIC,
            ..target("tlds=com")
        };
        assert!(get(1, 7, &other_route).is_none());
        // Segment and query cannot trade bytes.
        let a = Target {
            route: &REGISTRARS,
            plan: "pro",
            segment: "co",
            query: "m",
        };
        put(1, 7, &a, b"a", None);
        let b = Target {
            segment: "com",
            query: "",
            ..a
        };
        assert!(get(1, 7, &b).is_none());
        // Another snapshot, or another server: nothing kept.
        assert!(get(1, 8, &target("tlds=com")).is_none());
        assert!(
            get(1, 7, &target("tlds=com")).is_none(),
            "emptied by the swap"
        );
        put(1, 7, &target("tlds=com"), b"com", None);
        assert!(get(2, 7, &target("tlds=com")).is_none());
    }

    #[test]
    fn the_cache_is_bounded() {
        let big = vec![b'x'; MAX_BODY + 1];
        put(3, 1, &target("big"), &big, None);
        assert!(get(3, 1, &target("big")).is_none());
        let body = vec![b'y'; MAX_BODY];
        for i in 0..SLOTS * 4 {
            put(3, 1, &target(&format!("q={i}")), &body, None);
        }
        CACHE.with(|c| {
            let c = c.borrow();
            assert!(c.bytes <= BUDGET, "{} bytes kept", c.bytes);
            let held: usize = c.slots.iter().flatten().map(Slot::bytes).sum();
            assert_eq!(held, c.bytes);
        });
    }

    #[tokio::test]
    async fn the_elapsed_time_is_written_into_each_copy() {
        // A value no fresh measurement can read as.
        let body = br#"{"stats":{"time_elapsed":"123456.78ms","x":1}}"#;
        let cached = Cached {
            body: Bytes::copy_from_slice(body),
            elapsed: crate::query::elapsed_span(body),
        };
        assert_eq!(cached.elapsed, Some(26..37));
        let out = cached.with_elapsed(Stamp::now());
        let text = std::str::from_utf8(out.bytes()).unwrap();
        assert!(text.starts_with(r#"{"stats":{"time_elapsed":""#), "{text}");
        assert!(text.ends_with(r#"ms","x":1}}"#), "{text}");
        assert!(!text.contains("123456.78ms"), "{text}");
        // A large body: the same bytes, sent around the new value without a copy.
        let mut big = br#"{"results":""#.to_vec();
        big.resize(COPY_BELOW + 100, b'x');
        big.extend_from_slice(br#"","stats":{"time_elapsed":"123456.78ms","x":1}}"#);
        let cached = Cached {
            elapsed: crate::query::elapsed_span(&big),
            body: Bytes::from(big),
        };
        let out = cached.with_elapsed(Stamp::now());
        let out = http_body_util::BodyExt::collect(out)
            .await
            .unwrap()
            .to_bytes();
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with(r#"{"results":"xxx"#), "{text}");
        assert!(text.ends_with(r#"ms","x":1}}"#), "{text}");
        assert!(!text.contains("123456.78ms"), "{text}");
        let span = cached.elapsed.clone().unwrap();
        let value = &text[span.start..text.len() - (cached.body.len() - span.end)];
        assert!(value.ends_with("ms") && value.len() >= 6, "{value}");
        assert_eq!(
            &text[..span.start],
            std::str::from_utf8(&cached.body[..span.start]).unwrap()
        );
        // More than TAIL_WITH_PART bytes after the value: sent as a third chunk, and
        // the same bytes arrive.
        let mut long = br#"{"results":""#.to_vec();
        long.resize(COPY_BELOW + 100, b'x');
        long.extend_from_slice(br#"","stats":{"time_elapsed":"123456.78ms","tail":""#);
        long.resize(long.len() + TAIL_WITH_PART, b'y');
        long.extend_from_slice(br#""}}"#);
        let cached = Cached {
            elapsed: crate::query::elapsed_span(&long),
            body: Bytes::from(long),
        };
        let span = cached.elapsed.clone().unwrap();
        assert!(cached.body.len() - span.end > TAIL_WITH_PART);
        let out = cached.with_elapsed(Stamp::now());
        let out = http_body_util::BodyExt::collect(out)
            .await
            .unwrap()
            .to_bytes();
        let tail = &cached.body[span.end..];
        assert!(out.ends_with(tail));
        assert!(out.starts_with(&cached.body[..span.start]));
        let value = &out[span.start..out.len() - tail.len()];
        assert!(value.ends_with(b"ms") && !value.starts_with(b"123456.78"));
    }
}
