//! Where metering reads the time.
//!
//! Every rate-limit and credit decision asks a [`Clock`] for the current Unix time in
//! milliseconds, so tests drive time with a [`ManualClock`] (burst, refill, month
//! rollover) instead of sleeping; the server uses [`SystemClock`].

use std::sync::atomic::{AtomicI64, Ordering};

/// A source of wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;

    /// [`Clock::now_ms`], read precisely: what rate limits decide by (a token is due at
    /// an exact instant, and a late reading refuses a request that was due). The
    /// default is [`Clock::now_ms`], for clocks that are exact already.
    fn precise_now_ms(&self) -> i64 {
        self.now_ms()
    }
}

/// The operating system's wall clock, read coarsely: on Linux `CLOCK_REALTIME_COARSE`,
/// the time of the last timer tick (at most one tick old: 4 ms at `HZ=250`, which
/// `clock_getres` reports), read from memory the kernel shares without the time stamp
/// counter: ~7 ns against ~30 ns for `CLOCK_REALTIME` on this project's VM, and ~100
/// fewer instructions, on every metered request.
///
/// Credits, months and sessions need no finer time: they change on the second. Rate
/// limits do: a reading a tick late would refuse a request whose token was due, and on
/// a virtual machine whose host steals the time-keeping CPU the tick itself comes late
/// (CI saw it ~20 ms behind over a 2.2 s Enterprise burst, and refused requests that
/// were due). So the rate limiter asks [`Clock::precise_now_ms`], `CLOCK_REALTIME`: only
/// under a plan that has a rate limit, whose allowed requests are at most its rate (100
/// a second on Enterprise) and whose refusals are among the cheapest answers served,
/// so the ~25 ns it costs is paid where it cannot add up.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        coarse_now_ms()
    }

    fn precise_now_ms(&self) -> i64 {
        crate::time::now_ms()
    }
}

/// Milliseconds since the epoch by `CLOCK_REALTIME_COARSE` (a clock set before 1970
/// reads as the epoch rather than failing a request).
#[cfg(target_os = "linux")]
fn coarse_now_ms() -> i64 {
    let Some((secs, nanos)) = crate::time::read_clock(libc::CLOCK_REALTIME_COARSE) else {
        return crate::time::now_ms();
    };
    let ms = secs.saturating_mul(1000).saturating_add(nanos / 1_000_000);
    ms.max(0)
}

/// Milliseconds since the epoch (the precise clock where no coarse one is known).
#[cfg(not(target_os = "linux"))]
fn coarse_now_ms() -> i64 {
    crate::time::now_ms()
}

/// A clock that only moves when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `start_ms` (Unix milliseconds).
    pub fn new(start_ms: i64) -> ManualClock {
        ManualClock {
            ms: AtomicI64::new(start_ms),
        }
    }

    /// Moves the clock to `ms` (forwards or backwards).
    pub fn set(&self, ms: i64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance(&self, ms: i64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1_000);
        assert_eq!(c.now_ms(), 1_000);
        c.advance(250);
        assert_eq!(c.now_ms(), 1_250);
        c.set(5);
        assert_eq!(c.now_ms(), 5);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }

    #[test]
    fn system_clock_is_at_most_a_tick_behind_the_precise_one() {
        for _ in 0..1000 {
            let before = crate::time::now_ms();
            let coarse = SystemClock.now_ms();
            let after = crate::time::now_ms();
            // A tick is 1-10 ms (HZ 1000 to 100); the coarse clock never runs ahead.
            assert!(coarse <= after, "{coarse} after {after}");
            assert!(
                coarse >= before - 10,
                "{coarse} more than a tick before {before}"
            );
        }
    }
}
