//! Being a good citizen toward each upstream: at most a few requests at once, a token
//! bucket that paces them, the upstream's `Retry-After` obeyed, a circuit breaker that
//! stops asking a server that keeps failing, and a fair share of all that for each key.
//!
//! An upstream is kept twice: by name (an RDAP server's `host:port`, a WHOIS server: the
//! service whose `Retry-After` and failures are its own) and by the address actually
//! connected to after resolution (every name that resolves to one address shares that
//! address's pace, so a thousand names of one host are one upstream). Each is an
//! [`Upstreams`] table of [`Upstream`]s.
//!
//! ```text
//!  lookup ──Upstream::admit──▶ breaker open or Retry-After pending? refuse at once
//!                              a slot of the key's share: wait for it (if the budget allows)
//!                              next token of the bucket: wait for it (if the budget allows)
//!                              a concurrency permit: wait for it (if the budget allows)
//!         ──request──▶ Upstream::record(success | failure | retry-after)
//! ```
//!
//! The bucket here *schedules* (a request waits for its token when the wait fits in
//! its budget), where [`crate::access::rate`] *refuses* (a client over its rate gets a
//! 429 at once): an upstream should see a steady pace, and a caller of tldsnap would
//! rather wait 200 ms than get no answer.
//!
//! **A key's share.** One key holds at most [`Limits::per_key`] of an upstream's
//! requests at once, waiting for a token or in flight: a key with a hundred names for
//! one registry has at most that many of the bucket's next tokens reserved, so another
//! key's request waits behind at most that many of them, and while both wait their
//! requests take turns.
//!
//! **Memory.** A table holds at most its capacity of upstreams. When it is full, the
//! idle ones are forgotten: nobody holding or waiting for a permit, the bucket full
//! again (forgetting it gives nothing away), no `Retry-After` running and no breaker
//! open. An upstream that is resting is never forgotten; when none can be, a new
//! upstream is refused (`Busy`) until one can.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// How tldsnap treats each upstream. [`Limits::default`] is conservative: a registry
/// (and an address) sees at most 2 requests a second from one tldsnap (bursts of 5), 4
/// at once, at most 2 of them for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests in flight to one upstream at once.
    pub concurrency: usize,
    /// Sustained requests per second to one upstream.
    pub rate_per_second: u32,
    /// Requests that may go at once after a quiet period.
    pub burst: u32,
    /// Requests of one key held at one upstream at once (waiting for a token or in
    /// flight): its share.
    pub per_key: usize,
    /// Failures in a row (timeouts, errors, 5xx, garbage) that open the breaker.
    pub breaker_failures: u32,
    /// How long an open breaker refuses before one probe is let through.
    pub breaker_cooldown: Duration,
    /// The longest `Retry-After` obeyed (a longer one is cut to this).
    pub max_retry_after: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            concurrency: 4,
            rate_per_second: 2,
            burst: 5,
            per_key: 2,
            breaker_failures: 5,
            breaker_cooldown: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(600),
        }
    }
}

impl Limits {
    /// A key's share of `concurrency` requests: half of them, at least one.
    pub fn half_of(concurrency: usize) -> usize {
        (concurrency / 2).max(1)
    }
}

/// Why an upstream was not asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The breaker is open, or the upstream asked for a pause (`Retry-After`): it will
    /// be asked again after this long.
    Resting {
        /// Until the next attempt is allowed.
        retry_after: Duration,
        /// Whether the pause is the upstream's own `Retry-After` (else the breaker's).
        asked_by_upstream: bool,
    },
    /// The next token or permit (or a slot of the key's share) comes later than the
    /// request's budget allows, or the table of upstreams is full of ones that may not
    /// be forgotten.
    Busy {
        /// Until the next token.
        retry_after: Duration,
    },
}

/// What became of a request to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An answer that can be read (found or not found).
    Success,
    /// A timeout, a connection or TLS error, a 5xx, an answer that is not the protocol's.
    Failure,
    /// A 429 or 503 with `Retry-After`: no request until then.
    RetryAfter(Duration),
}

/// Upstreams tldsnap has asked, by name (`rdap.verisign.com:443`, `whois.nic.io:43`) or
/// by address (`192.0.2.1:443`), at most a capacity of them (module docs).
#[derive(Debug)]
pub struct Upstreams {
    limits: Limits,
    capacity: usize,
    by_name: Mutex<HashMap<String, Arc<Upstream>>>,
}

/// Most upstreams one table remembers: RDAP servers of the bootstrap (a few hundred
/// hosts), WHOIS servers IANA names, the addresses they and the TLS lookups' hosts
/// resolve to. About 200 bytes each.
pub const MAX_UPSTREAMS: usize = 4096;

impl Upstreams {
    /// An empty table of at most [`MAX_UPSTREAMS`], each upstream treated with `limits`.
    pub fn new(limits: Limits) -> Upstreams {
        Upstreams::with_capacity(limits, MAX_UPSTREAMS)
    }

    /// An empty table of at most `capacity` upstreams.
    pub fn with_capacity(limits: Limits, capacity: usize) -> Upstreams {
        Upstreams {
            limits,
            capacity: capacity.max(1),
            by_name: Mutex::new(HashMap::new()),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Upstreams remembered now.
    pub fn len(&self) -> usize {
        self.by_name.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state of upstream `name`, made on first use. A full table first forgets its
    /// idle upstreams; when none is idle, a new upstream is refused (`Busy`) rather
    /// than any resting one forgotten.
    pub fn get(&self, name: &str) -> Result<Arc<Upstream>, Refusal> {
        let mut map = self.by_name.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = map.get(name) {
            return Ok(Arc::clone(u));
        }
        if map.len() >= self.capacity {
            let now = Instant::now();
            // A clone of an `Arc` is only made under this lock, so a count of one is
            // an upstream nobody holds (no permit, nobody waiting for one).
            map.retain(|_, u| Arc::strong_count(u) > 1 || !u.is_idle(now));
            if map.len() >= self.capacity {
                return Err(Refusal::Busy {
                    retry_after: Duration::from_secs(1),
                });
            }
        }
        let u = Arc::new(Upstream::new(name, self.limits));
        map.insert(name.to_owned(), Arc::clone(&u));
        Ok(u)
    }
}

/// One upstream's pace, permits, breaker and the shares of the keys asking it.
#[derive(Debug)]
pub struct Upstream {
    name: String,
    limits: Limits,
    permits: Arc<Semaphore>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The bucket's theoretical arrival time (GCRA): when it would be full again.
    tat: Instant,
    /// Failures in a row.
    failures: u32,
    /// No request before this (breaker open, or the upstream's Retry-After).
    resting_until: Option<Instant>,
    /// Whether the rest was asked by the upstream.
    asked_by_upstream: bool,
    /// A probe after the breaker's cooldown is in flight: others wait for its outcome.
    probing: bool,
    /// The share of each key with a request held here (removed when it holds none).
    shares: HashMap<Arc<str>, Arc<Semaphore>>,
}

/// Leave to send one request; dropping it frees the concurrency slot and the key's
/// slot (and, for the breaker's probe, lets another probe go should this one end
/// without an outcome: a request dropped at its deadline must not leave the upstream
/// shut for good).
#[derive(Debug)]
pub struct Permit {
    slot: Option<OwnedSemaphorePermit>,
    share: Option<(Arc<str>, OwnedSemaphorePermit)>,
    upstream: Arc<Upstream>,
    probe: bool,
}

impl Permit {
    /// The upstream this permit is for.
    pub fn upstream(&self) -> &Arc<Upstream> {
        &self.upstream
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        drop(self.slot.take());
        let share = self.share.take();
        if !self.probe && share.is_none() {
            return;
        }
        let mut s = self.upstream.state();
        if self.probe {
            s.probing = false;
        }
        if let Some((key, slot)) = share {
            drop(slot);
            s.forget_share(&key);
        }
    }
}

impl State {
    /// Drops the share of `key` when no request of it holds or waits for a slot (a
    /// clone of a share is only made under the state's lock).
    fn forget_share(&mut self, key: &str) {
        if self
            .shares
            .get(key)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            self.shares.remove(key);
        }
    }
}

impl Upstream {
    fn new(name: &str, limits: Limits) -> Upstream {
        Upstream {
            name: name.to_owned(),
            limits,
            permits: Arc::new(Semaphore::new(limits.concurrency.max(1))),
            state: Mutex::new(State {
                tat: Instant::now(),
                failures: 0,
                resting_until: None,
                asked_by_upstream: false,
                probing: false,
                shares: HashMap::new(),
            }),
        }
    }

    /// The upstream's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether forgetting this upstream at `now` loses nothing an upstream asked for or
    /// a pace owes: no rest running (its `Retry-After`, an open breaker), no probe, no
    /// share held, the bucket full again. (Whether anybody holds it is the table's
    /// question.)
    fn is_idle(&self, now: Instant) -> bool {
        let s = self.state();
        s.resting_until.is_none_or(|t| t <= now)
            && !s.probing
            && s.shares.is_empty()
            && s.tat <= now
    }

    /// Refuses while the upstream rests; after a breaker's cooldown, lets one probe
    /// through when `take_probe` (returns whether this request is it).
    fn check_rest(&self, s: &mut State, now: Instant, take_probe: bool) -> Result<bool, Refusal> {
        let Some(until) = s.resting_until else {
            return Ok(false);
        };
        if until > now {
            return Err(Refusal::Resting {
                retry_after: until - now,
                asked_by_upstream: s.asked_by_upstream,
            });
        }
        if s.failures < self.limits.breaker_failures {
            if take_probe {
                s.resting_until = None;
            }
            return Ok(false);
        }
        // Half open: one probe finds out whether the upstream is back.
        if s.probing {
            return Err(Refusal::Resting {
                retry_after: Duration::from_secs(1),
                asked_by_upstream: false,
            });
        }
        if take_probe {
            s.probing = true;
        }
        Ok(take_probe)
    }

    /// Leave to send one request for `key` (`None`: no key's share applies) before
    /// `deadline`: refused at once while the upstream rests; otherwise waits for a slot
    /// of the key's share, a token of the bucket and a concurrency slot, unless any
    /// comes after the deadline.
    pub async fn admit(
        self: &Arc<Self>,
        key: Option<&Arc<str>>,
        deadline: Instant,
    ) -> Result<Permit, Refusal> {
        let busy = Refusal::Busy {
            retry_after: Duration::from_secs(1),
        };
        let share = match key {
            None => None,
            Some(key) => {
                let semaphore = {
                    let mut s = self.state();
                    self.check_rest(&mut s, Instant::now(), false)?;
                    let per_key = self.limits.per_key.max(1);
                    Arc::clone(
                        s.shares
                            .entry(Arc::clone(key))
                            .or_insert_with(|| Arc::new(Semaphore::new(per_key))),
                    )
                };
                let acquired =
                    tokio::time::timeout_at(deadline, Arc::clone(&semaphore).acquire_owned()).await;
                drop(semaphore);
                match acquired {
                    Ok(Ok(slot)) => Some((Arc::clone(key), slot)),
                    _ => {
                        self.state().forget_share(key);
                        return Err(busy);
                    }
                }
            }
        };
        // From here the permit frees what it holds, however the admission ends.
        let mut permit = Permit {
            slot: None,
            share,
            upstream: Arc::clone(self),
            probe: false,
        };
        let now = Instant::now();
        let start_at = {
            let mut s = self.state();
            permit.probe = self.check_rest(&mut s, now, true)?;
            // GCRA as a schedule: this request's token is the bucket's next one.
            let interval = Duration::from_secs(1) / self.limits.rate_per_second.max(1);
            let tau = interval * self.limits.burst.max(1);
            let new_tat = s.tat.max(now) + interval;
            let start_at = new_tat.checked_sub(tau).unwrap_or(now).max(now);
            if start_at > deadline {
                return Err(Refusal::Busy {
                    retry_after: start_at - now,
                });
            }
            s.tat = new_tat;
            start_at
        };
        tokio::time::sleep_until(start_at).await;
        match tokio::time::timeout_at(deadline, Arc::clone(&self.permits).acquire_owned()).await {
            Ok(Ok(slot)) => {
                permit.slot = Some(slot);
                Ok(permit)
            }
            _ => Err(busy),
        }
    }

    /// Records what became of a request sent under a permit.
    pub fn record(&self, outcome: Outcome) {
        let now = Instant::now();
        let mut s = self.state();
        s.probing = false;
        match outcome {
            Outcome::Success => {
                s.failures = 0;
                s.resting_until = None;
                s.asked_by_upstream = false;
            }
            Outcome::Failure => {
                s.failures = s.failures.saturating_add(1);
                if s.failures >= self.limits.breaker_failures {
                    s.resting_until = Some(now + self.limits.breaker_cooldown);
                    s.asked_by_upstream = false;
                }
            }
            Outcome::RetryAfter(wait) => {
                let until = now + wait.min(self.limits.max_retry_after);
                if s.resting_until.is_none_or(|t| t < until) {
                    s.resting_until = Some(until);
                    s.asked_by_upstream = true;
                }
            }
        }
    }
}

/// The wait a `Retry-After` value asks for: delta-seconds, or an HTTP date
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) measured from `now_ms`. `None` when it is neither.
pub fn parse_retry_after(value: &str, now_ms: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? + 1;
    let iso = format!("{year}-{month:02}-{day:0>2}T{time}Z");
    let at = crate::time::parse_rfc3339(&iso)?;
    Some(Duration::from_millis(
        at.saturating_sub(now_ms).max(0) as u64
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            concurrency: 2,
            rate_per_second: 10,
            burst: 2,
            per_key: 2,
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_paces_requests_after_the_burst() {
        let u = Arc::new(Upstream::new("rdap.test:443", limits()));
        let far = Instant::now() + Duration::from_secs(60);
        let t0 = Instant::now();
        for _ in 0..2 {
            drop(u.admit(None, far).await.unwrap());
        }
        assert_eq!(Instant::now(), t0, "the burst goes at once");
        drop(u.admit(None, far).await.unwrap());
        assert_eq!(Instant::now() - t0, Duration::from_millis(100));
        // A token later than the deadline is refused without waiting.
        let soon = Instant::now() + Duration::from_millis(10);
        let err = u.admit(None, soon).await.unwrap_err();
        assert_eq!(
            err,
            Refusal::Busy {
                retry_after: Duration::from_millis(100)
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_is_bounded() {
        let u = Arc::new(Upstream::new(
            "rdap.test:443",
            Limits {
                rate_per_second: 1000,
                burst: 1000,
                ..limits()
            },
        ));
        let far = Instant::now() + Duration::from_secs(60);
        let a = u.admit(None, far).await.unwrap();
        let _b = u.admit(None, far).await.unwrap();
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(
            u.admit(None, soon).await,
            Err(Refusal::Busy { .. })
        ));
        drop(a);
        assert!(u.admit(None, far).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn the_breaker_opens_rests_and_lets_one_probe_through() {
        let u = Arc::new(Upstream::new(
            "rdap.test:443",
            Limits {
                rate_per_second: 1000,
                burst: 1000,
                ..limits()
            },
        ));
        let far = || Instant::now() + Duration::from_secs(600);
        for _ in 0..3 {
            drop(u.admit(None, far()).await.unwrap());
            u.record(Outcome::Failure);
        }
        let Err(Refusal::Resting {
            retry_after,
            asked_by_upstream: false,
        }) = u.admit(None, far()).await
        else {
            panic!("the breaker should be open")
        };
        assert_eq!(retry_after, Duration::from_secs(30));
        tokio::time::advance(Duration::from_secs(31)).await;
        let probe = u.admit(None, far()).await.unwrap();
        assert!(matches!(
            u.admit(None, far()).await,
            Err(Refusal::Resting { .. })
        ));
        drop(probe);
        u.record(Outcome::Failure);
        assert!(matches!(
            u.admit(None, far()).await,
            Err(Refusal::Resting { .. })
        ));
        tokio::time::advance(Duration::from_secs(31)).await;
        // A probe dropped without an outcome (its request cut off at a deadline) lets
        // the next one through.
        drop(u.admit(None, far()).await.unwrap());
        tokio::time::advance(Duration::from_secs(1)).await;
        drop(u.admit(None, far()).await.unwrap());
        u.record(Outcome::Success);
        drop(u.admit(None, far()).await.unwrap());
        drop(u.admit(None, far()).await.unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_is_obeyed_up_to_the_cap() {
        let u = Arc::new(Upstream::new("rdap.test:443", limits()));
        let far = Instant::now() + Duration::from_secs(6000);
        drop(u.admit(None, far).await.unwrap());
        u.record(Outcome::RetryAfter(Duration::from_secs(5)));
        assert_eq!(
            u.admit(None, far).await.unwrap_err(),
            Refusal::Resting {
                retry_after: Duration::from_secs(5),
                asked_by_upstream: true
            }
        );
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(u.admit(None, far).await.unwrap());
        u.record(Outcome::RetryAfter(Duration::from_secs(86_400)));
        let Err(Refusal::Resting { retry_after, .. }) = u.admit(None, far).await else {
            panic!()
        };
        assert_eq!(retry_after, Duration::from_secs(60));
    }

    #[test]
    fn retry_after_values() {
        assert_eq!(parse_retry_after("120", 0), Some(Duration::from_secs(120)));
        let now = crate::time::parse_rfc3339("1994-11-06T08:49:00Z").unwrap();
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(37))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now + 100_000),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", 0), None);
        assert_eq!(parse_retry_after("-1", 0), None);
    }

    fn quick() -> Limits {
        Limits {
            rate_per_second: 1000,
            burst: 1000,
            ..limits()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_holds_at_most_its_share_and_others_go_past_it() {
        let u = Arc::new(Upstream::new(
            "rdap.test:443",
            Limits {
                concurrency: 4,
                per_key: 1,
                ..quick()
            },
        ));
        let (a, b): (Arc<str>, Arc<str>) = ("key-a".into(), "key-b".into());
        let far = || Instant::now() + Duration::from_secs(60);
        let held = u.admit(Some(&a), far()).await.unwrap();
        // The key's second request waits for its first; it is refused at its deadline.
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(
            u.admit(Some(&a), soon).await,
            Err(Refusal::Busy { .. })
        ));
        // Another key goes past it, and so does a request for no key.
        let other = u.admit(Some(&b), far()).await.unwrap();
        drop(u.admit(None, far()).await.unwrap());
        // The waiting request goes as soon as the first is done.
        let waiting = {
            let u = Arc::clone(&u);
            let a = Arc::clone(&a);
            tokio::spawn(async move { u.admit(Some(&a), far()).await.map(drop) })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiting.is_finished());
        drop(held);
        waiting.await.unwrap().unwrap();
        drop(other);
        assert!(
            u.state().shares.is_empty(),
            "shares held by nobody are dropped"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_cannot_reserve_the_bucket_ahead_of_others() {
        // 10 a second, bursts of 2: a key with 20 requests waiting holds at most 2 of
        // the next tokens, so another key's request goes within 2 intervals.
        let u = Arc::new(Upstream::new("rdap.test:443", limits()));
        let a: Arc<str> = "bulk".into();
        let far = Instant::now() + Duration::from_secs(60);
        for _ in 0..2 {
            drop(u.admit(Some(&a), far).await.unwrap());
        }
        let t0 = Instant::now();
        let bulk: Vec<_> = (0..20)
            .map(|_| {
                let (u, a) = (Arc::clone(&u), Arc::clone(&a));
                tokio::spawn(async move { drop(u.admit(Some(&a), far).await.unwrap()) })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        drop(u.admit(Some(&"other".into()), far).await.unwrap());
        assert!(
            Instant::now() - t0 <= Duration::from_millis(300),
            "waited {:?}",
            Instant::now() - t0
        );
        for b in bulk {
            b.await.unwrap();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_table_forgets_the_idle_and_never_the_resting() {
        let all = Upstreams::with_capacity(quick(), 4);
        let far = || Instant::now() + Duration::from_secs(600);
        // One asked for a pause, one's breaker is open, one is held, one is idle.
        let paused = all.get("paused:443").unwrap();
        drop(paused.admit(None, far()).await.unwrap());
        paused.record(Outcome::RetryAfter(Duration::from_secs(50)));
        let broken = all.get("broken:443").unwrap();
        for _ in 0..3 {
            drop(broken.admit(None, far()).await.unwrap());
            broken.record(Outcome::Failure);
        }
        let held = all.get("held:443").unwrap();
        let permit = held.admit(None, far()).await.unwrap();
        drop(held);
        drop(all.get("idle:443").unwrap());
        drop((paused, broken));
        assert_eq!(all.len(), 4);

        // A fifth: the idle one is forgotten, nothing else.
        let fifth = all.get("fifth:443").unwrap();
        assert_eq!(all.len(), 4);
        let paused = all.get("paused:443").unwrap();
        assert!(matches!(
            paused.admit(None, far()).await,
            Err(Refusal::Resting {
                asked_by_upstream: true,
                ..
            })
        ));
        assert!(matches!(
            all.get("broken:443").unwrap().admit(None, far()).await,
            Err(Refusal::Resting {
                asked_by_upstream: false,
                ..
            })
        ));
        drop(paused);
        // Full of upstreams that may not be forgotten (and the fifth, held): refused.
        assert!(matches!(all.get("sixth:443"), Err(Refusal::Busy { .. })));
        // Once the pause and the breaker's rest are over and the permit is dropped,
        // they are idle too.
        drop(permit);
        drop(fifth);
        tokio::time::advance(Duration::from_secs(60)).await;
        for n in 0..4 {
            drop(all.get(&format!("new{n}:443")).unwrap());
        }
        assert_eq!(all.len(), 4);
        assert!(!all.by_name.lock().unwrap().contains_key("paused:443"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_bucket_that_owes_its_pace_is_not_forgotten() {
        // 10 a second, bursts of 2: after 3 requests the bucket is 100 ms in debt.
        let all = Upstreams::with_capacity(limits(), 1);
        let far = Instant::now() + Duration::from_secs(60);
        let busy = all.get("busy:443").unwrap();
        for _ in 0..3 {
            drop(busy.admit(None, far).await.unwrap());
        }
        drop(busy);
        assert!(matches!(all.get("next:443"), Err(Refusal::Busy { .. })));
        tokio::time::advance(Duration::from_millis(200)).await;
        drop(all.get("next:443").unwrap());
        assert_eq!(all.len(), 1);
    }

    #[test]
    fn upstreams_are_shared_by_name() {
        let all = Upstreams::new(limits());
        let a = all.get("a:443").unwrap();
        assert!(Arc::ptr_eq(&a, &all.get("a:443").unwrap()));
        assert!(!Arc::ptr_eq(&a, &all.get("b:443").unwrap()));
        assert_eq!(a.name(), "a:443");
    }
}
