//! Being a good citizen toward each upstream (an RDAP or WHOIS server): at most a few
//! requests at once, a token bucket that paces them, the upstream's `Retry-After`
//! obeyed, and a circuit breaker that stops asking a server that keeps failing.
//!
//! ```text
//!  lookup ──Upstream::admit──▶ breaker open or Retry-After pending? refuse at once
//!                              next token of the bucket: wait for it (if the budget allows)
//!                              a concurrency permit: wait for it (if the budget allows)
//!         ──request──▶ Upstream::record(success | failure | retry-after)
//! ```
//!
//! The bucket here *schedules* (a request waits for its token when the wait fits in
//! its budget), where [`crate::access::rate`] *refuses* (a client over its rate gets a
//! 429 at once): an upstream should see a steady pace, and a caller of tldsnap would
//! rather wait 200 ms than get no answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

/// How tldsnap treats each upstream. [`Limits::default`] is conservative: a registry
/// sees at most 2 requests a second from one tldsnap (bursts of 5), 4 at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests in flight to one upstream at once.
    pub concurrency: usize,
    /// Sustained requests per second to one upstream.
    pub rate_per_second: u32,
    /// Requests that may go at once after a quiet period.
    pub burst: u32,
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
            breaker_failures: 5,
            breaker_cooldown: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(600),
        }
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
    /// The next token or permit comes later than the request's budget allows.
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

/// Every upstream tldsnap has asked, by name (`rdap.verisign.com:443`, `whois.nic.io`).
#[derive(Debug)]
pub struct Upstreams {
    limits: Limits,
    by_name: Mutex<HashMap<String, Arc<Upstream>>>,
}

/// Most upstreams remembered: RDAP servers of the bootstrap (a few hundred hosts) and
/// WHOIS servers IANA names; a map that grew past this is cleared (losing only paces
/// and breaker counts, never answers).
const MAX_UPSTREAMS: usize = 4096;

impl Upstreams {
    /// An empty set, each upstream to be treated with `limits`.
    pub fn new(limits: Limits) -> Upstreams {
        Upstreams {
            limits,
            by_name: Mutex::new(HashMap::new()),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The state of upstream `name`, made on first use.
    pub fn get(&self, name: &str) -> Arc<Upstream> {
        let mut map = self.by_name.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = map.get(name) {
            return Arc::clone(u);
        }
        if map.len() >= MAX_UPSTREAMS {
            map.clear();
        }
        let u = Arc::new(Upstream::new(name, self.limits));
        map.insert(name.to_owned(), Arc::clone(&u));
        u
    }
}

/// One upstream's pace, permits and breaker.
#[derive(Debug)]
pub struct Upstream {
    name: String,
    limits: Limits,
    permits: Semaphore,
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
}

/// Leave to send one request; dropping it frees the concurrency slot (and, for the
/// breaker's probe, lets another probe go should this one end without an outcome: a
/// request dropped at its deadline must not leave the upstream shut for good).
#[derive(Debug)]
pub struct Permit<'a> {
    _slot: SemaphorePermit<'a>,
    upstream: &'a Upstream,
    probe: bool,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.probe {
            self.upstream.state().probing = false;
        }
    }
}

impl Upstream {
    fn new(name: &str, limits: Limits) -> Upstream {
        Upstream {
            name: name.to_owned(),
            limits,
            permits: Semaphore::new(limits.concurrency.max(1)),
            state: Mutex::new(State {
                tat: Instant::now(),
                failures: 0,
                resting_until: None,
                asked_by_upstream: false,
                probing: false,
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

    /// Leave to send one request before `deadline`: refused at once while the upstream
    /// rests; otherwise waits for a token of the bucket and a concurrency slot, unless
    /// either comes after the deadline.
    pub async fn admit(&self, deadline: Instant) -> Result<Permit<'_>, Refusal> {
        let now = Instant::now();
        let mut probe = false;
        let start_at = {
            let mut s = self.state();
            if let Some(until) = s.resting_until {
                if until > now {
                    return Err(Refusal::Resting {
                        retry_after: until - now,
                        asked_by_upstream: s.asked_by_upstream,
                    });
                }
                if s.failures >= self.limits.breaker_failures {
                    // Half open: one probe finds out whether the upstream is back.
                    if s.probing {
                        return Err(Refusal::Resting {
                            retry_after: Duration::from_secs(1),
                            asked_by_upstream: false,
                        });
                    }
                    s.probing = true;
                    probe = true;
                } else {
                    s.resting_until = None;
                }
            }
            // GCRA as a schedule: this request's token is the bucket's next one.
            let interval = Duration::from_secs(1) / self.limits.rate_per_second.max(1);
            let tau = interval * self.limits.burst.max(1);
            let new_tat = s.tat.max(now) + interval;
            let start_at = new_tat.checked_sub(tau).unwrap_or(now).max(now);
            if start_at > deadline {
                if s.probing {
                    s.probing = false;
                }
                return Err(Refusal::Busy {
                    retry_after: start_at - now,
                });
            }
            s.tat = new_tat;
            start_at
        };
        tokio::time::sleep_until(start_at).await;
        match tokio::time::timeout_at(deadline, self.permits.acquire()).await {
            Ok(Ok(slot)) => Ok(Permit {
                _slot: slot,
                upstream: self,
                probe,
            }),
            _ => {
                self.state().probing = false;
                Err(Refusal::Busy {
                    retry_after: Duration::from_secs(1),
                })
            }
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
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_paces_requests_after_the_burst() {
        let u = Upstream::new("rdap.test:443", limits());
        let far = Instant::now() + Duration::from_secs(60);
        let t0 = Instant::now();
        for _ in 0..2 {
            drop(u.admit(far).await.unwrap());
        }
        assert_eq!(Instant::now(), t0, "the burst goes at once");
        drop(u.admit(far).await.unwrap());
        assert_eq!(Instant::now() - t0, Duration::from_millis(100));
        // A token later than the deadline is refused without waiting.
        let soon = Instant::now() + Duration::from_millis(10);
        let err = u.admit(soon).await.unwrap_err();
        assert_eq!(
            err,
            Refusal::Busy {
                retry_after: Duration::from_millis(100)
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_is_bounded() {
        let u = Upstream::new(
            "rdap.test:443",
            Limits {
                rate_per_second: 1000,
                burst: 1000,
                ..limits()
            },
        );
        let far = Instant::now() + Duration::from_secs(60);
        let a = u.admit(far).await.unwrap();
        let _b = u.admit(far).await.unwrap();
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(u.admit(soon).await, Err(Refusal::Busy { .. })));
        drop(a);
        assert!(u.admit(far).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn the_breaker_opens_rests_and_lets_one_probe_through() {
        let u = Upstream::new(
            "rdap.test:443",
            Limits {
                rate_per_second: 1000,
                burst: 1000,
                ..limits()
            },
        );
        let far = || Instant::now() + Duration::from_secs(600);
        for _ in 0..3 {
            drop(u.admit(far()).await.unwrap());
            u.record(Outcome::Failure);
        }
        let Err(Refusal::Resting {
            retry_after,
            asked_by_upstream: false,
        }) = u.admit(far()).await
        else {
            panic!("the breaker should be open")
        };
        assert_eq!(retry_after, Duration::from_secs(30));
        tokio::time::advance(Duration::from_secs(31)).await;
        let probe = u.admit(far()).await.unwrap();
        assert!(matches!(u.admit(far()).await, Err(Refusal::Resting { .. })));
        drop(probe);
        u.record(Outcome::Failure);
        assert!(matches!(u.admit(far()).await, Err(Refusal::Resting { .. })));
        tokio::time::advance(Duration::from_secs(31)).await;
        // A probe dropped without an outcome (its request cut off at a deadline) lets
        // the next one through.
        drop(u.admit(far()).await.unwrap());
        tokio::time::advance(Duration::from_secs(1)).await;
        drop(u.admit(far()).await.unwrap());
        u.record(Outcome::Success);
        drop(u.admit(far()).await.unwrap());
        drop(u.admit(far()).await.unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_is_obeyed_up_to_the_cap() {
        let u = Upstream::new("rdap.test:443", limits());
        let far = Instant::now() + Duration::from_secs(6000);
        drop(u.admit(far).await.unwrap());
        u.record(Outcome::RetryAfter(Duration::from_secs(5)));
        assert_eq!(
            u.admit(far).await.unwrap_err(),
            Refusal::Resting {
                retry_after: Duration::from_secs(5),
                asked_by_upstream: true
            }
        );
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(u.admit(far).await.unwrap());
        u.record(Outcome::RetryAfter(Duration::from_secs(86_400)));
        let Err(Refusal::Resting { retry_after, .. }) = u.admit(far).await else {
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

    #[test]
    fn upstreams_are_shared_by_name() {
        let all = Upstreams::new(limits());
        let a = all.get("a:443");
        assert!(Arc::ptr_eq(&a, &all.get("a:443")));
        assert!(!Arc::ptr_eq(&a, &all.get("b:443")));
        assert_eq!(a.name(), "a:443");
    }
}
