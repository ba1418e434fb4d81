//! The cache of live answers: bounded in bytes, each entry kept as long as its answer
//! says (a DNS TTL, minutes for registration data, less for negative answers), and one
//! upstream lookup per key at a time — a hundred requests for the same name while its
//! answer is on the way wait for that one answer instead of asking a hundred times.
//!
//! Failures are never cached: the per-upstream breaker ([`super::limits`]) is what keeps
//! a failing upstream from being asked again at once.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// An answer type the cache holds: each has its own [`Kind`], so a key never holds
/// another type than the one asked for.
pub trait Cacheable: Send + Sync + 'static {
    /// The kind of the keys of this type.
    const KIND: Kind;
}

/// What kind of answer a key holds (one name has one answer of each kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Registration data (RDAP or WHOIS) of a registrable domain.
    Registry,
    /// The WHOIS server IANA names for a TLD.
    WhoisReferral,
    /// DNS records of one name and type.
    Dns,
    /// The TLS certificate of a host.
    Tls,
    /// Whether the resolver validates DNSSEC (one key).
    DnssecProbe,
}

impl Kind {
    /// Every kind, in slot order.
    pub const ALL: [Kind; 5] = [
        Kind::Registry,
        Kind::WhoisReferral,
        Kind::Dns,
        Kind::Tls,
        Kind::DnssecProbe,
    ];

    /// The `cache` label of the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Registry => "registry",
            Kind::WhoisReferral => "whois_referral",
            Kind::Dns => "dns",
            Kind::Tls => "tls",
            Kind::DnssecProbe => "dnssec_probe",
        }
    }
}

#[derive(Clone)]
struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    ttl: Duration,
    weight: u32,
}

struct ByEntry;

impl moka::Expiry<(Kind, String), Entry> for ByEntry {
    fn expire_after_create(
        &self,
        _key: &(Kind, String),
        value: &Entry,
        _created_at: std::time::Instant,
    ) -> Option<Duration> {
        Some(value.ttl)
    }
}

/// The cache. Cloning it clones a handle to the same entries.
#[derive(Clone)]
pub struct Cache {
    entries: moka::future::Cache<(Kind, String), Entry>,
    /// Per kind: answers served without a lookup of this caller's (from the cache, or
    /// by joining a lookup already on its way), and lookups run.
    counts: Arc<[[AtomicU64; 2]; Kind::ALL.len()]>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("entries", &self.entries.entry_count())
            .finish()
    }
}

/// A fresh answer to cache: the value, how long it stays, and about how many bytes it
/// holds (what the cache's bound counts).
pub struct Fresh<T> {
    /// The answer.
    pub value: T,
    /// How long it may be served from the cache.
    pub ttl: Duration,
    /// Its approximate size in bytes.
    pub bytes: usize,
}

impl Cache {
    /// A cache holding at most about `max_bytes` bytes of answers.
    pub fn new(max_bytes: u64) -> Cache {
        Cache {
            entries: moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &(Kind, String), entry: &Entry| {
                    entry.weight.saturating_add(key.1.len() as u32 + 64)
                })
                .expire_after(ByEntry)
                .build(),
            counts: Arc::new(std::array::from_fn(|_| {
                std::array::from_fn(|_| AtomicU64::new(0))
            })),
        }
    }

    /// Per kind ([`Kind::ALL`]): hits (answers served without a lookup of the
    /// caller's own: from the cache, or by joining a lookup already on its way) and
    /// misses (lookups run, failed ones included).
    pub fn counts(&self) -> [[u64; 2]; Kind::ALL.len()] {
        self.counts
            .each_ref()
            .map(|c| c.each_ref().map(|a| a.load(Relaxed)))
    }

    /// The answer of type `T` for `name`: from the cache, or from `lookup` (run once
    /// for all callers that ask for the same key meanwhile), cached for its TTL when it
    /// succeeds. A TTL of zero is served but not kept.
    pub async fn get_or_lookup<T, E, F>(&self, name: &str, lookup: F) -> Result<Arc<T>, E>
    where
        T: Cacheable,
        E: Clone + Send + Sync + 'static,
        F: Future<Output = Result<Fresh<T>, E>>,
    {
        let key = (T::KIND, name.to_owned());
        let ran = AtomicBool::new(false);
        let entry = self
            .entries
            .try_get_with(key.clone(), async {
                ran.store(true, Relaxed);
                let fresh = lookup.await?;
                Ok::<_, E>(Entry {
                    value: Arc::new(fresh.value) as Arc<dyn Any + Send + Sync>,
                    ttl: fresh.ttl,
                    weight: u32::try_from(fresh.bytes).unwrap_or(u32::MAX),
                })
            })
            .await;
        let miss = usize::from(ran.load(Relaxed));
        self.counts[T::KIND as usize][miss].fetch_add(1, Relaxed);
        let entry = entry.map_err(|e| E::clone(&e))?;
        if entry.ttl.is_zero() {
            self.entries.invalidate(&key).await;
        }
        // The key's kind is T's own, so the value is a T.
        Ok(entry
            .value
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("a {:?} key holds another type", T::KIND)))
    }

    /// Entries held now (approximate: moka counts lazily).
    pub fn len(&self) -> u64 {
        self.entries.entry_count()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug, PartialEq)]
    struct Reg(u32);
    impl Cacheable for Reg {
        const KIND: Kind = Kind::Registry;
    }
    #[derive(Debug, PartialEq)]
    struct Rec(&'static str);
    impl Cacheable for Rec {
        const KIND: Kind = Kind::Dns;
    }
    #[derive(Debug, PartialEq)]
    struct Cert(usize);
    impl Cacheable for Cert {
        const KIND: Kind = Kind::Tls;
    }

    #[tokio::test]
    async fn one_lookup_serves_every_concurrent_caller_and_failures_are_not_kept() {
        let cache = Cache::new(1 << 20);
        let calls = Arc::new(AtomicUsize::new(0));
        let mut waiting = Vec::new();
        for _ in 0..20 {
            let cache = cache.clone();
            let calls = Arc::clone(&calls);
            waiting.push(tokio::spawn(async move {
                cache
                    .get_or_lookup("example.com", async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok::<_, String>(Fresh {
                            value: Reg(7),
                            ttl: Duration::from_secs(60),
                            bytes: 4,
                        })
                    })
                    .await
            }));
        }
        for w in waiting {
            assert_eq!(*w.await.unwrap().unwrap(), Reg(7));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Another kind of the same name is another key.
        let other = cache
            .get_or_lookup("example.com", async {
                Ok::<_, String>(Fresh {
                    value: Rec("a"),
                    ttl: Duration::from_secs(60),
                    bytes: 1,
                })
            })
            .await
            .unwrap();
        assert_eq!(*other, Rec("a"));
        // A failure is returned and not kept.
        let failed: Result<Arc<Reg>, String> = cache
            .get_or_lookup("down.com", async { Err("timeout".to_owned()) })
            .await;
        assert_eq!(failed.unwrap_err(), "timeout");
        let later = cache
            .get_or_lookup("down.com", async {
                Ok::<_, String>(Fresh {
                    value: Reg(1),
                    ttl: Duration::from_secs(60),
                    bytes: 4,
                })
            })
            .await
            .unwrap();
        assert_eq!(*later, Reg(1));
        // Hits: the 19 callers that joined the one lookup; misses: the lookups run.
        let counts = cache.counts();
        assert_eq!(counts[Kind::Registry as usize], [19, 3]);
        assert_eq!(counts[Kind::Dns as usize], [0, 1]);
        assert_eq!(counts[Kind::Tls as usize], [0, 0]);
    }

    #[tokio::test]
    async fn a_zero_ttl_answer_is_served_and_not_kept() {
        let cache = Cache::new(1 << 20);
        let calls = AtomicUsize::new(0);
        for _ in 0..3 {
            let v = cache
                .get_or_lookup("x.test", async {
                    Ok::<_, String>(Fresh {
                        value: Cert(calls.fetch_add(1, Ordering::SeqCst)),
                        ttl: Duration::ZERO,
                        bytes: 8,
                    })
                })
                .await
                .unwrap();
            assert!(v.0 < 3);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
