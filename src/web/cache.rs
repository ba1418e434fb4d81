//! Rendered pages, kept per snapshot: a page that does not depend on the request beyond
//! its path and the viewer's plan and currency (the key holds all three, so a visitor's
//! choice of currency never reaches another's page) is rendered once and then served as shared bytes (and
//! compressed once, the first time a client accepts gzip).
//!
//! Sixteen shards, each a small mutex held for one hash lookup. A shard that sees a new
//! snapshot drops what it held; a shard past [`SHARD_PAGES`] pages is emptied (catalogue
//! filters make the key space unbounded, so the cache is bounded instead of exact).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use std::io::Write as _;

use bytes::Bytes;

const SHARDS: usize = 16;
/// Most pages one shard keeps (4,096 in all).
pub const SHARD_PAGES: usize = 256;

/// One rendered page.
#[derive(Debug)]
pub struct Page {
    /// The HTML.
    pub html: Bytes,
    gzip: OnceLock<Bytes>,
}

impl Page {
    /// A page of `html`.
    ///
    /// Kept without the spare capacity left by writing it (up to as much again: a
    /// `Bytes` made from a `Vec` keeps the whole allocation), since a page stays cached
    /// for the life of its snapshot.
    pub fn new(html: String) -> Page {
        let mut html = html.into_bytes();
        html.shrink_to_fit();
        Page {
            html: Bytes::from(html),
            gzip: OnceLock::new(),
        }
    }

    /// The HTML, gzip-compressed (once).
    pub fn gzip(&self) -> &Bytes {
        self.gzip.get_or_init(|| {
            let mut gz = gzip(&self.html);
            gz.shrink_to_fit();
            Bytes::from(gz)
        })
    }
}

#[derive(Default)]
struct Shard {
    snapshot: u128,
    /// By key, hashed with aHash (SipHash, the default, cost ~150 instructions a
    /// lookup of a page's key; the keys come from requests, and aHash is keyed too).
    pages: HashMap<String, Arc<Page>, ahash::RandomState>,
}

/// The cache.
pub struct PageCache {
    shards: [Mutex<Shard>; SHARDS],
}

impl Default for PageCache {
    fn default() -> PageCache {
        PageCache {
            shards: std::array::from_fn(|_| Mutex::new(Shard::default())),
        }
    }
}

impl std::fmt::Debug for PageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageCache").finish_non_exhaustive()
    }
}

impl PageCache {
    fn shard(&self, key: &str) -> std::sync::MutexGuard<'_, Shard> {
        let i = twox_hash::XxHash3_64::oneshot(key.as_bytes()) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The page `key` of `snapshot`, if rendered.
    pub fn get(&self, snapshot: u128, key: &str) -> Option<Arc<Page>> {
        let shard = self.shard(key);
        if shard.snapshot != snapshot {
            return None;
        }
        shard.pages.get(key).cloned()
    }

    /// Keeps `page` as `key` of `snapshot`.
    pub fn insert(&self, snapshot: u128, key: String, page: Arc<Page>) {
        let mut shard = self.shard(&key);
        if shard.snapshot != snapshot || shard.pages.len() >= SHARD_PAGES {
            shard.pages.clear();
            shard.snapshot = snapshot;
        }
        shard.pages.insert(key, page);
    }

    /// Pages held, over all shards.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).pages.len())
            .sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The website's share of the server state.
#[derive(Debug, Default)]
pub struct Site {
    /// Rendered pages.
    pub cache: PageCache,
}

/// Gzip at the default level (pages are compressed once and cached).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4 + 64),
        flate2::Compression::default(),
    );
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_belong_to_one_snapshot_and_the_cache_is_bounded() {
        let c = PageCache::default();
        c.insert(1, "a".into(), Arc::new(Page::new("A".into())));
        assert_eq!(c.get(1, "a").unwrap().html, "A");
        assert!(c.get(2, "a").is_none());
        c.insert(2, "a".into(), Arc::new(Page::new("B".into())));
        assert!(c.get(1, "a").is_none());
        for i in 0..SHARDS * SHARD_PAGES * 3 {
            c.insert(2, format!("k{i}"), Arc::new(Page::new(String::new())));
        }
        assert!(c.len() <= SHARDS * SHARD_PAGES);
        let p = Page::new("x".repeat(1000));
        assert!(p.gzip().len() < 100);
    }
}
