//! Rate limits: GCRA (the generic cell rate algorithm), a token bucket kept as one number.
//!
//! A bucket of `burst` tokens refilled at `rate` per second is the same thing as a
//! *theoretical arrival time* (TAT): the instant at which the bucket would be full again.
//! Each request moves the TAT `1/rate` seconds later; a request is refused when that
//! would put the TAT more than `burst/rate` seconds after now. One `u64` per key, updated
//! with a compare-and-swap: no lock, no background refill task, exact under concurrency.
//!
//! Unauthenticated public calls are limited per client address in [`AddressLimiter`], a
//! map split into shards (each behind its own small mutex), so no lock is shared by all
//! requests. IPv6 clients are limited per /64, the block one customer line usually gets,
//! so that one client cannot escape the limit by rotating addresses inside it.

use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Outcome of one rate-limit check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed (it then took a token).
    pub allowed: bool,
    /// The bucket size (`RateLimit-Limit`).
    pub limit: u32,
    /// Whole requests that could still be sent right now (`RateLimit-Remaining`).
    pub remaining: u32,
    /// Seconds until the bucket is full again (`RateLimit-Reset`), rounded up.
    pub reset_secs: u64,
    /// When refused: seconds until one request would be allowed (`Retry-After`), at least 1.
    pub retry_after_secs: u64,
}

/// Microseconds between two requests at `rate` per second, rounded up so that the
/// sustained rate is never exceeded.
fn interval_us(rate: u32) -> u64 {
    1_000_000u64.div_ceil(u64::from(rate.max(1)))
}

/// Computes the decision for a stored TAT; returns it and the TAT to store when allowed.
pub fn decide(tat_us: u64, now_us: u64, rate: u32, burst: u32) -> (Decision, u64) {
    let t = interval_us(rate);
    let burst = burst.max(1);
    let tau = t * u64::from(burst);
    let start = tat_us.max(now_us);
    let new_tat = start.saturating_add(t);
    if new_tat - now_us <= tau {
        let room = tau - (new_tat - now_us);
        let d = Decision {
            allowed: true,
            limit: burst,
            remaining: (room / t).min(u64::from(burst)) as u32,
            reset_secs: (new_tat - now_us).div_ceil(1_000_000),
            retry_after_secs: 0,
        };
        (d, new_tat)
    } else {
        let wait = new_tat - tau - now_us;
        let d = Decision {
            allowed: false,
            limit: burst,
            remaining: 0,
            reset_secs: (start - now_us).div_ceil(1_000_000),
            retry_after_secs: wait.div_ceil(1_000_000).max(1),
        };
        (d, tat_us)
    }
}

/// The rate-limit state of one key: its TAT in Unix microseconds.
#[derive(Debug, Default)]
pub struct Bucket {
    tat_us: AtomicU64,
}

impl Bucket {
    /// Takes one token if there is one.
    pub fn check(&self, now_ms: i64, rate: u32, burst: u32) -> Decision {
        let now_us = (now_ms.max(0) as u64).saturating_mul(1000);
        let mut cur = self.tat_us.load(Ordering::Acquire);
        loop {
            let (d, next) = decide(cur, now_us, rate, burst);
            if !d.allowed || next == cur {
                return d;
            }
            match self
                .tat_us
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return d,
                Err(actual) => cur = actual,
            }
        }
    }

    /// What a check would say, without taking a token.
    pub fn peek(&self, now_ms: i64, rate: u32, burst: u32) -> Decision {
        let now_us = (now_ms.max(0) as u64).saturating_mul(1000);
        let tat = self.tat_us.load(Ordering::Acquire);
        let t = interval_us(rate);
        let tau = t * u64::from(burst.max(1));
        let used = tat.saturating_sub(now_us);
        Decision {
            allowed: used + t <= tau,
            limit: burst.max(1),
            remaining: (tau.saturating_sub(used) / t).min(u64::from(burst)) as u32,
            reset_secs: used.div_ceil(1_000_000),
            retry_after_secs: 0,
        }
    }
}

const SHARDS: usize = 64;

/// Per-client-address buckets for unauthenticated public calls.
pub struct AddressLimiter {
    shards: Box<[Mutex<Shard>]>,
    hasher: ahash::RandomState,
}

#[derive(Default)]
struct Shard {
    tats: ahash::AHashMap<u128, u64>,
    /// Size at which the shard next drops entries whose bucket is full again (a full
    /// bucket is the same as no entry), so memory follows the number of active clients.
    prune_at: usize,
}

impl Default for AddressLimiter {
    fn default() -> Self {
        AddressLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: ahash::RandomState::new(),
        }
    }
}

impl std::fmt::Debug for AddressLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AddressLimiter")
    }
}

/// The identity a client address is limited under: the IPv4 address, or the IPv6 /64.
fn client_key(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => u128::from(u32::from(v4)),
            None => (u128::from(v6) & !((1u128 << 64) - 1)) | 1,
        },
    }
}

impl AddressLimiter {
    /// Takes one token from `client`'s bucket if there is one.
    pub fn check(&self, client: IpAddr, now_ms: i64, rate: u32, burst: u32) -> Decision {
        let key = client_key(client);
        let shard = &self.shards[(self.hasher.hash_one(key) as usize) % SHARDS];
        let now_us = (now_ms.max(0) as u64).saturating_mul(1000);
        // A poisoned shard only means another thread panicked mid-update of a plain
        // number map; the data is still usable.
        let mut s = match shard.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if s.tats.len() >= s.prune_at.max(1024) {
            s.tats.retain(|_, tat| *tat > now_us);
            s.prune_at = s.tats.len() * 2;
        }
        let tat = s.tats.get(&key).copied().unwrap_or(0);
        let (d, next) = decide(tat, now_us, rate, burst);
        if d.allowed {
            s.tats.insert(key, next);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_throttle_then_refill() {
        let b = Bucket::default();
        let t0 = 1_700_000_000_000;
        for i in 0..5 {
            let d = b.check(t0, 1, 5);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 4 - i);
            assert_eq!(d.limit, 5);
        }
        let d = b.check(t0, 1, 5);
        assert!(!d.allowed);
        assert_eq!((d.remaining, d.retry_after_secs, d.reset_secs), (0, 1, 5));
        // One token back after one second, not before.
        assert!(!b.check(t0 + 999, 1, 5).allowed);
        let d = b.check(t0 + 1000, 1, 5);
        assert!(d.allowed);
        assert_eq!(d.remaining, 0);
        // Full again after five quiet seconds.
        assert_eq!(b.peek(t0 + 6000, 1, 5).remaining, 5);
        assert_eq!(b.peek(t0 + 6000, 1, 5).reset_secs, 0);
    }

    #[test]
    fn sustained_rate_is_never_exceeded() {
        let b = Bucket::default();
        let t0 = 1_700_000_000_000;
        let mut allowed = 0;
        // 10 seconds of a request every millisecond at 100/s with a burst of 1000.
        for ms in 0..10_000 {
            if b.check(t0 + ms, 100, 1000).allowed {
                allowed += 1;
            }
        }
        assert_eq!(allowed, 1000 + 999);
    }

    #[test]
    fn addresses_are_limited_separately_and_ipv6_per_64() {
        let l = AddressLimiter::default();
        let t = 1_700_000_000_000;
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..20 {
            assert!(l.check(a, t, 10, 20).allowed);
        }
        assert!(!l.check(a, t, 10, 20).allowed);
        assert!(l.check(b, t, 10, 20).allowed);
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::ffff:1".parse().unwrap();
        for _ in 0..20 {
            assert!(l.check(v6a, t, 10, 20).allowed);
        }
        assert!(!l.check(v6b, t, 10, 20).allowed, "same /64");
        assert!(
            l.check("2001:db8:0:1::1".parse().unwrap(), t, 10, 20)
                .allowed
        );
    }
}
